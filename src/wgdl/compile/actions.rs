//! Pass 2: actions (kind, binding, owner, conditions, actor gates and walk orders), their
//! compiled conditions and durations, and the goals. Also the lint for consequences never attached.

use super::*;

impl Compiler<'_> {
    pub(super) fn collect_actions(&mut self) {
        for (decl_ix, d) in self.decls().enumerate() {
            match &d.kind {
                DeclKind::Action { name, kind } => {
                    if let Some(&prev) = self.action_ix.get(&name.name) {
                        let first_line = line_of(&self.source, self.actions[prev as usize].span);
                        self.error(name.span, DiagKind::Duplicate { what: "action", name: name.name.clone(), first_line });
                        continue;
                    }
                    let mut var = NO_VAR;
                    let (k, class, bind) = match kind {
                        AstActionKind::Rule => (ActionKind::Rule, None, BindKind::None),
                        AstActionKind::OnCreate { class } => (ActionKind::OnCreate, self.resolve_class(class, "class"), BindKind::None),
                        AstActionKind::Player { class, binding } | AstActionKind::OnRound { class, binding } => {
                            let c = self.resolve_class(class, "class");
                            let b = match binding {
                                None => BindKind::None,
                                Some((Binding::ForEveryGod, bc)) => self.resolve_class(bc, "class").map_or(BindKind::None, BindKind::God),
                                Some((Binding::ForEveryInstance, bc)) => {
                                    self.resolve_class(bc, "class").map_or(BindKind::None, BindKind::Instance)
                                }
                                Some((Binding::ForEveryNumber(lo, hi), v)) => {
                                    var = self.intern(&v.name);
                                    BindKind::Number(*lo as u32, *hi as u32)
                                }
                                Some((Binding::ForEveryHex, v)) => {
                                    var = self.intern(&v.name);
                                    if self.x.hex.is_none() {
                                        self.error(
                                            v.span,
                                            DiagKind::Invalid {
                                                what: "`forEveryHex` without a hex map".into(),
                                                expected: "a `hexmap \"<file>\"` line".into(),
                                            },
                                        );
                                    }
                                    BindKind::Hex
                                }
                                Some((b @ (Binding::ForEveryCell(_) | Binding::ForEveryStep { .. }), v)) => {
                                    match self.board_binding(c, b, v) {
                                        Some((bk, sym)) => {
                                            var = sym;
                                            if let Binding::ForEveryCell(g) = b
                                                && let Some(gi) = self.x.grid_ix.get(&g.name).copied()
                                            {
                                                self.board.cell_vars.insert(self.actions.len() as ActionId, gi);
                                            }
                                            bk
                                        }
                                        None => continue,
                                    }
                                }
                            };
                            let round = matches!(kind, AstActionKind::OnRound { .. });
                            if round && !matches!(b, BindKind::None | BindKind::Instance(_)) {
                                self.error(
                                    name.span,
                                    DiagKind::Invalid {
                                        what: "a `round:` hook with a binding other than forEveryInstance".into(),
                                        expected: "`action round:<Class> <name>` or `… forEveryInstance <Class>`".into(),
                                    },
                                );
                            }
                            (if round { ActionKind::OnRound } else { ActionKind::Player }, c, b)
                        }
                    };
                    if k != ActionKind::Rule && class.is_none() {
                        continue;
                    }
                    if self.over_limit(self.actions.len(), "actions", name.span) {
                        continue;
                    }
                    self.action_ix.insert(name.name.clone(), self.actions.len() as ActionId);
                    self.actions.push(ActionInfo {
                        id: self.actions.len() as ActionId,
                        name: name.name.clone(),
                        span: name.span,
                        kind: k,
                        class,
                        bind,
                        conditions: vec![],
                        consequences: vec![],
                        group: 0,
                        duration: None,
                        policy_only: false,
                        choose: None,
                        last_resort: None,
                        unless: Vec::new(),
                        owner_conds: 0,
                        global_conds: 0,
                        reads: 0,
                        swap_filter: None,
                        row_scan: None,
                        cell_tests: None,
                        walk_order: None,
                        actor_gate: None,
                        chance: None,
                    });
                    self.action_var.push(var);
                }
                DeclKind::Consequence { name, .. } => {
                    if let Some(&prev) = self.cons_ix.get(&name.name) {
                        let first_line = line_of(&self.source, self.file.decls[prev].span);
                        self.error(name.span, DiagKind::Duplicate { what: "consequence", name: name.name.clone(), first_line });
                        continue;
                    }
                    self.cons_ix.insert(name.name.clone(), decl_ix);
                }
                _ => {}
            }
        }
        // Group membership.
        let group_ix: HashMap<String, u16> = self.groups.iter().enumerate().map(|(i, g)| (g.name.clone(), i as u16)).collect();
        let mut member: HashMap<ActionId, Span> = HashMap::new();
        for d in self.decls() {
            if let DeclKind::IsInGroup { group, action } = &d.kind {
                let Some(&g) = group_ix.get(&group.name) else {
                    let known = self.known(&group_ix);
                    self.error(
                        group.span,
                        DiagKind::UnknownName {
                            what: "action group",
                            name: group.name.clone(),
                            expected: format!("a group declared with `actionGroup` ({known})"),
                        },
                    );
                    continue;
                };
                let Some(a) = self.lookup_action(action) else { continue };
                if self.actions[a as usize].kind != ActionKind::Player {
                    self.error(
                        action.span,
                        DiagKind::Invalid {
                            what: format!("`{}` is not a player action", action.name),
                            expected: "only player actions (`action <Class> <name>`) belong to groups".into(),
                        },
                    );
                    continue;
                }
                if let Some(first) = member.insert(a, action.span) {
                    let first_line = line_of(&self.source, first);
                    self.error(
                        action.span,
                        DiagKind::Duplicate { what: "group membership of action", name: action.name.clone(), first_line },
                    );
                    continue;
                }
                self.actions[a as usize].group = g;
            }
        }
        if self.groups.is_empty() {
            self.groups.push(Group { name: "all".into(), weight: 1.0 });
        } else {
            for a in 0..self.actions.len() {
                if self.actions[a].kind == ActionKind::Player && !member.contains_key(&(a as ActionId)) {
                    let (span, name) = (self.actions[a].span, self.actions[a].name.clone());
                    let groups: Vec<&str> = self.groups.iter().map(|g| g.name.as_str()).collect();
                    let groups = groups.join(", ");
                    self.error(
                        span,
                        DiagKind::Invalid {
                            what: format!("player action `{name}` is in no action group"),
                            expected: format!("`isInGroup <group> {name}` with one of: {groups}"),
                        },
                    );
                }
            }
        }
        // Per-class action lists and create hooks: the parent's first (as `ClassInfo` promises),
        // then the class's own in declaration order. `class_order` puts parents before children.
        // Each class's own actions, in declaration order (one pass over the actions).
        let mut own: Vec<Vec<ActionId>> = vec![Vec::new(); self.classes.len()];
        for (a, info) in self.actions.iter().enumerate() {
            if let Some(c) = info.class {
                own[c as usize].push(a as ActionId);
            }
        }
        for &c in &self.class_order.clone() {
            let (mut actions, mut hooks) = match self.classes[c as usize].parent {
                Some(p) => (self.out_classes[p as usize].actions.clone(), self.out_classes[p as usize].create_hooks.clone()),
                None => (vec![], vec![]),
            };
            for &a in &own[c as usize] {
                match self.actions[a as usize].kind {
                    ActionKind::Player => actions.push(a),
                    ActionKind::OnCreate => hooks.push(a),
                    ActionKind::Rule | ActionKind::OnRound => {}
                }
            }
            self.out_classes[c as usize].actions = actions;
            self.out_classes[c as usize].create_hooks = hooks;
        }
    }

    pub(super) fn lookup_action(&mut self, id: &ast::Ident) -> Option<ActionId> {
        match self.action_ix.get(&id.name) {
            Some(&a) => Some(a),
            None => {
                let known = self.known(&self.action_ix);
                self.error(
                    id.span,
                    DiagKind::UnknownName { what: "action", name: id.name.clone(), expected: format!("a declared action ({known})") },
                );
                None
            }
        }
    }

    pub(super) fn ctx_of(&self, a: ActionId) -> CtxKey {
        let info = &self.actions[a as usize];
        CtxKey { this: info.class, bind: info.bind, var: self.action_var[a as usize] }
    }

    pub(super) fn compile_actions(&mut self) {
        // Where each duration was first given (`None` = the default duration).
        let mut durations: HashMap<Option<ActionId>, Span> = HashMap::new();
        for d in self.decls() {
            match &d.kind {
                DeclKind::Condition { action, expr } => {
                    let Some(a) = self.lookup_action(action) else { continue };
                    let cx = self.ctx_of(a);
                    if let Some(e) = self.top_expr(expr, cx, Some(Ty::Bool), "a condition") {
                        self.actions[a as usize].conditions.push(e);
                    }
                }
                DeclKind::HasConsequence { action, consequences } => {
                    let Some(a) = self.lookup_action(action) else { continue };
                    for consequence in consequences {
                        let Some(&ci) = self.cons_ix.get(&consequence.name) else {
                            let known = self.known(&self.cons_ix);
                            self.error(
                                consequence.span,
                                DiagKind::UnknownName {
                                    what: "consequence",
                                    name: consequence.name.clone(),
                                    expected: format!("a declared consequence ({known})"),
                                },
                            );
                            continue;
                        };
                        let cx = self.ctx_of(a);
                        if let Some(c) = self.consequence(ci, cx, consequence.span) {
                            self.actions[a as usize].consequences.push(c);
                        }
                    }
                }
                DeclKind::Duration { action, expr } => match action {
                    None => {
                        if let Some(&first) = durations.get(&None) {
                            let first_line = line_of(&self.source, first);
                            self.error(d.span, DiagKind::Duplicate { what: "default duration", name: "duration".into(), first_line });
                            continue;
                        }
                        durations.insert(None, d.span);
                        self.default_duration = self.duration_expr(expr, NO_CTX);
                    }
                    Some(a) => {
                        let Some(a) = self.lookup_action(a) else { continue };
                        if self.actions[a as usize].kind != ActionKind::Player {
                            self.error(
                                d.span,
                                DiagKind::Invalid {
                                    what: "a duration on a rule or create hook".into(),
                                    expected: "durations only on player actions".into(),
                                },
                            );
                            continue;
                        }
                        if let Some(&first) = durations.get(&Some(a)) {
                            let first_line = line_of(&self.source, first);
                            self.error(
                                d.span,
                                DiagKind::Duplicate { what: "duration of action", name: self.actions[a as usize].name.clone(), first_line },
                            );
                            continue;
                        }
                        durations.insert(Some(a), d.span);
                        let cx = self.ctx_of(a);
                        self.actions[a as usize].duration = self.duration_expr(expr, cx);
                    }
                },
                _ => {}
            }
        }
    }

    pub(super) fn duration_expr(&mut self, e: &ast::Expr, cx: CtxKey) -> Option<(ExprId, bool)> {
        let (id, ty) = self.top_expr_any(e, cx)?;
        match ty {
            Ty::Long => Some((id, false)),
            Ty::Double => Some((id, true)),
            t => {
                let found = self.ty_name(t);
                self.error(e.span, DiagKind::TypeMismatch { expected: "a number of seconds (long or double)".into(), found });
                None
            }
        }
    }

    pub(super) fn compile_goals(&mut self) {
        let mut by_k: BTreeMap<u32, (ExprId, Span, String)> = BTreeMap::new();
        for d in self.decls() {
            if let DeclKind::Goal { k, k_span, expr } = &d.kind {
                if let Some((_, first, _)) = by_k.get(k) {
                    let first_line = line_of(&self.source, *first);
                    self.error(*k_span, DiagKind::Duplicate { what: "goal", name: k.to_string(), first_line });
                    continue;
                }
                if let Some(e) = self.top_expr(expr, NO_CTX, Some(Ty::Bool), "a goal") {
                    by_k.insert(*k, (e, *k_span, self.source.slice(expr.span).to_string()));
                }
            }
        }
        for (i, (k, (e, span, text))) in by_k.into_iter().enumerate() {
            if k as usize != i + 1 {
                self.error(
                    span,
                    DiagKind::Invalid {
                        what: format!("goal {k} follows goal {i}"),
                        expected: format!("goals numbered 1, 2, 3, … without gaps (goal {} is missing)", i + 1),
                    },
                );
            }
            self.goals.push(GoalInfo { k, expr: e, text, reads: 0 });
        }
    }

    pub(super) fn lint_unused_consequences(&mut self) {
        let used: std::collections::HashSet<usize> = self.cons_memo.keys().map(|(i, _)| *i).collect();
        let mut unused: Vec<(usize, Span, String)> = Vec::new();
        for (name, &i) in &self.cons_ix {
            if !used.contains(&i) {
                unused.push((i, self.file.decls[i].span, name.clone()));
            }
        }
        unused.sort();
        for (_, span, name) in unused {
            self.warn(
                span,
                DiagKind::Lint(format!(
                    "consequence `{name}` is never attached (`hasConsequence <action> {name}`) or used by a conditional/timed consequence"
                )),
            );
        }
    }
}
