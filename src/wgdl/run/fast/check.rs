//! A whole-program check that the closures and the bytecode interpreter agree: every expression
//! that can run in a state is evaluated both ways (the differential tests call it on every shipped
//! game).

use super::*;

impl Program {
    /// Evaluates every expression that can run in `st` — each player action's conditions for
    /// every owner and binding (in order, up to the first that fails, as move generation does),
    /// the consequences and duration of every move whose conditions hold, choose keys, policy
    /// weights, turn and occupant conditions, rules, goals, outcomes and constraints — once
    /// through its closure and once through the bytecode, and lists every disagreement (value or
    /// error). For the differential test of the closure compiler; returns how many it compared.
    pub fn closure_mismatches(&self, st: &State) -> (usize, Vec<String>) {
        let n = std::cell::Cell::new(0usize);
        let bad = std::cell::RefCell::new(Vec::new());
        let check = |e: ExprId, this: u32, bound: u32| -> bool {
            n.set(n.get() + 1);
            let ctx = Ctx { this, bound };
            let (fast, slow) = (self.eval(st, e, ctx), self.eval_bytecode(st, e, ctx));
            if fast != slow {
                let text = self.source.slice(self.spans[e.start as usize]).to_string();
                bad.borrow_mut().push(format!(
                    "expression at `{text}` (code {}..{}), this {this}, bound {bound}: closure {fast:?}, bytecode {slow:?}",
                    e.start,
                    e.start + e.len
                ));
            }
            matches!(slow, Ok(v) if v != 0)
        };
        let none = NONE;
        let conses_of = |a: &ActionInfo| -> Vec<ExprId> {
            let mut out = Vec::new();
            let mut todo: Vec<ConsId> = a.consequences.clone();
            while let Some(c) = todo.pop() {
                match &self.conses[c as usize].code {
                    Cons::Assign { place, value } => {
                        out.push(*value);
                        if let Place::Field(e, _) | Place::Dyn(e) = place {
                            out.push(*e);
                        }
                    }
                    Cons::Conditional { cond, then } => {
                        out.push(*cond);
                        todo.extend(then);
                    }
                    Cons::Timed { delay, then, .. } => {
                        out.push(*delay);
                        todo.push(*then);
                    }
                    Cons::Create { assign: Some(Place::Field(e, _) | Place::Dyn(e)), .. } => out.push(*e),
                    Cons::GameIncrease { rest, by, .. } => {
                        out.extend(rest.iter().filter_map(|s| if let Segment::Dynamic(e) = s { Some(*e) } else { None }));
                        out.extend(by);
                    }
                    Cons::Delete { obj } => out.push(*obj),
                    Cons::Tile { args, .. } => out.extend(args),
                    Cons::Create { .. } | Cons::EndSession | Cons::EndTurn => {}
                }
            }
            out
        };
        for (ai, a) in self.actions.iter().enumerate() {
            let owners: Vec<u32> = match (a.kind, a.class) {
                (ActionKind::Rule, _) | (_, None) => vec![none],
                (_, Some(c)) => (0..st.objects.len() as u32)
                    .filter(|&o| st.objects[o as usize].alive && self.is_sub(st.objects[o as usize].class, c))
                    .collect(),
            };
            let bindings: Vec<u32> = match a.bind {
                BindKind::None => vec![none],
                BindKind::God(c) => self.classes[c as usize].gods.iter().map(|&g| g as u32).collect(),
                BindKind::Instance(c) => (0..st.objects.len() as u32)
                    .filter(|&o| st.objects[o as usize].alive && self.is_sub(st.objects[o as usize].class, c))
                    .collect(),
                BindKind::Number(lo, hi) => (lo..=hi.min(lo.saturating_add(200))).collect(),
                BindKind::Hex => self.hex.as_ref().map_or(Vec::new(), |h| (0..h.len() as u32).filter(|&c| !h.wall[c as usize]).collect()),
                BindKind::Step(t) => (0..(self.board.tables[t as usize].moves.len() as u32).min(201)).collect(),
            };
            for &this in &owners {
                for &bound in &bindings {
                    let holds = a.conditions.iter().all(|&c| check(c, this, bound));
                    if let Some((_, k)) = a.choose {
                        check(k, this, bound);
                    }
                    if holds && a.kind == ActionKind::Player {
                        for e in conses_of(a) {
                            check(e, this, bound);
                        }
                        // Each consequence run through its closure and by its kind, on copies.
                        for &c in &a.consequences {
                            let ctx = Ctx { this, bound };
                            let (mut x, mut y) = (st.clone(), st.clone());
                            let (rx, ry) = (self.exec(&mut x, c, ctx, 0), self.exec_generic(&mut y, c, ctx, 0));
                            n.set(n.get() + 1);
                            if rx != ry || x != y {
                                bad.borrow_mut().push(format!(
                                    "consequence `{}`, this {this}, bound {bound}: closure {rx:?}, by kind {ry:?}",
                                    self.conses[c as usize].name
                                ));
                            }
                        }
                        // The whole action as a move runs it (with its consequences decided
                        // on class constants, `Program::plan`), and one by one by kind.
                        {
                            let ctx = Ctx { this, bound };
                            let (mut x, mut y) = (st.clone(), st.clone());
                            let rx = self.run_consequences(&mut x, ai as ActionId, ctx, 0);
                            let ry = a.consequences.iter().try_for_each(|&c| self.exec_generic(&mut y, c, ctx, 0));
                            n.set(n.get() + 1);
                            if rx != ry || x != y {
                                bad.borrow_mut().push(format!(
                                    "action `{}`, this {this}, bound {bound}: its consequences {rx:?}, one by one by kind {ry:?}",
                                    a.name
                                ));
                            }
                        }
                        if let Some((e, _)) = a.duration {
                            check(e, this, bound);
                        }
                        for p in &self.policies {
                            for t in p.tiers.iter().filter(|t| t.action as usize == ai) {
                                if let Some(c) = t.cond {
                                    check(c, this, bound);
                                }
                                if let PickCode::Weight(e, _) | PickCode::Max(e, _) = t.pick {
                                    check(e, this, bound);
                                }
                            }
                        }
                    }
                }
            }
        }
        for g in &self.goals {
            check(g.expr, none, none);
        }
        for o in &self.outcomes {
            check(o.expr, none, none);
        }
        for (e, _) in &self.constraints {
            check(*e, none, none);
        }
        for (i, o) in st.objects.iter().enumerate() {
            if let Some(t) = &self.turn
                && let Some(c) = t.cond
                && o.alive
                && self.is_sub(o.class, t.class)
            {
                check(c, i as u32, none);
            }
            if let Some(oc) = &self.occupants
                && let Some(c) = oc.cond
                && o.alive
                && self.is_sub(o.class, oc.class)
            {
                check(c, i as u32, none);
            }
        }
        (n.get(), bad.into_inner())
    }
}
