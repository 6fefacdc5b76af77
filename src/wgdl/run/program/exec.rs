//! Consequences and time: a consequence run by its kind, rules fired to a fixpoint, the game
//! clock advanced through the timer queue, sessions ended, and goals advanced after a move.

use super::*;

impl Program {
    /// Runs consequence `c` by its kind: the reference for the closures of
    /// [`Program::exec`](crate::wgdl::fast), and what they fall back to for the rarer kinds.
    pub(in crate::wgdl) fn exec_generic(&self, st: &mut State, c: ConsId, ctx: Ctx, depth: u32) -> Result<(), RuntimeError> {
        let info = &self.conses[c as usize];
        match &info.code {
            Cons::Assign { place, value } => {
                // The value first, then where it goes (whose error wins when both fail), read
                // from one environment; then the write.
                let (idx, v) = {
                    let env = crate::wgdl::program::Env::new(self, st, ctx);
                    let v = self.eval_env(&env, *value)?;
                    let idx = match *place {
                        Place::Slot(s) => s,
                        Place::This(o) => env.this_base() + o,
                        Place::Bound(o) => env.bound_base() + o,
                        Place::Field(e, o) => {
                            let obj = self.eval_env(&env, e)?;
                            self.deref(st, obj, (e.start + e.len - 1) as usize)?.base + o
                        }
                        Place::Dyn(e) => self.eval_env(&env, e)? as u32,
                    };
                    (idx, v)
                };
                if !matches!(place, Place::Dyn(_)) {
                    st.dirty.mark(crate::wgdl::parts::slot(idx as usize));
                }
                st.slots[idx as usize] = v;
                Ok(())
            }
            Cons::Conditional { cond, then } => {
                if self.eval(st, *cond, ctx)? != 0 {
                    for &t in then {
                        self.exec(st, t, ctx, depth)?;
                    }
                }
                Ok(())
            }
            Cons::Timed { delay, delay_is_double, then } => {
                let raw = self.eval(st, *delay, ctx)?;
                let delay = if *delay_is_double { f64::from_bits(raw as u64).floor() as i64 } else { raw };
                if delay < 0 {
                    return Err(rt(RtKind::NegativeDelay { delay }, info.span));
                }
                if st.timers.len() as u32 >= self.limits.timers {
                    return Err(rt(RtKind::TooManyTimers { limit: self.limits.timers }, info.span));
                }
                let t = Timer { due: st.clock.saturating_add(delay), seq: st.timer_seq, cons: *then, this: ctx.this, bound: ctx.bound };
                st.timer_seq += 1;
                // Keep the queue sorted descending by (due, seq): the next timer is last.
                let pos = st.timers.partition_point(|x| (x.due, x.seq) > (t.due, t.seq));
                st.timers.insert(pos, t);
                Ok(())
            }
            Cons::Create { god, assign } => {
                let g = match god {
                    GodSel::Fixed(g) => *g,
                    GodSel::Bound => ctx.bound as GodId,
                };
                let id = self.create(st, g, depth, info.span)?;
                if let Some(place) = assign {
                    self.write(st, *place, ctx, id as i64)?;
                }
                Ok(())
            }
            Cons::GameIncrease { node, rest, by } => {
                let mut node = *node;
                for seg in rest {
                    let sym = match seg {
                        Segment::Sym(s) => *s,
                        Segment::Dynamic(e) => self.eval(st, *e, ctx)?,
                    };
                    node = self.store.dyn_children[(self.store.dyn_base[node as usize] as i64 + sym) as usize];
                }
                let amount = match by {
                    Some(e) => self.eval(st, *e, ctx)?,
                    None => 1,
                };
                let n = self.n_store_nodes();
                st.slots[node as usize] = st.slots[node as usize].wrapping_add(amount);
                let mut a = node;
                let mut parts = crate::wgdl::parts::store(0);
                while a != 0 {
                    st.slots[n + a as usize] = st.slots[n + a as usize].wrapping_add(amount);
                    parts |= crate::wgdl::parts::store(a);
                    a = self.store.parent[a as usize];
                }
                st.dirty.mark(parts);
                Ok(())
            }
            Cons::Delete { obj } => {
                let v = self.eval(st, *obj, ctx)?;
                match st.objects.get_mut(v as usize) {
                    Some(o) if v >= 0 && o.alive => {
                        o.alive = false;
                        st.dirty.mark(crate::wgdl::parts::GONE);
                        // Timers owned by the deleted object, or bound to it by forEveryInstance,
                        // die with it. (A forEveryGOD `bound` is a description, not an object.)
                        let v = v as u32;
                        let bound_to_v = |t: &Timer| t.bound == v && matches!(self.conses[t.cons as usize].bind, BindKind::Instance(_));
                        st.timers.retain(|t| t.this != v && !bound_to_v(t));
                        Ok(())
                    }
                    _ => Err(rt(RtKind::DeleteNull, info.span)),
                }
            }
            Cons::EndSession => {
                st.end_session = true;
                Ok(())
            }
            Cons::EndTurn => {
                st.end_turn = true;
                Ok(())
            }
            Cons::Tile { grid, op, args } => {
                let mut vals = [0i64; TileOp::MAX_ARGS];
                for (v, &a) in vals.iter_mut().zip(args) {
                    *v = self.eval(st, a, ctx)?;
                }
                self.tile_do(st, *grid, *op, &vals[..args.len()], info.span, ctx.this)
            }
        }
    }

    /// Fires rules to a fixpoint: passes over all rules in file order until one pass fires none,
    /// or until a rule asks to end the session.
    #[inline]
    pub(in crate::wgdl) fn fire_rules(&self, st: &mut State) -> Result<(), RuntimeError> {
        if self.rules.is_empty() {
            st.dirty.rules = 0;
            return Ok(());
        }
        self.fire_rules_pass(st)
    }

    /// Whether rule `a`'s conditions hold: on the compiled tier through their generated
    /// conjunction, where it does not give up; else (and to report an error) as interpreted.
    #[inline]
    fn rule_holds(&self, st: &State, a: &ActionInfo, ctx: Ctx) -> Result<bool, RuntimeError> {
        #[cfg(feature = "compiled")]
        if let Some(check) = self.fast.rule_check(self, a.id)
            && let Some(v) = check.call(&crate::wgdl::program::Env::new(self, st, ctx))
        {
            return Ok(v != 0);
        }
        self.conditions_hold(st, a, ctx)
    }

    fn fire_rules_pass(&self, st: &mut State) -> Result<(), RuntimeError> {
        let ctx = Ctx { this: NONE, bound: NONE };
        let mut firings = 0u32;
        loop {
            let mut fired = false;
            for &r in &self.rules {
                let a = &self.actions[r as usize];
                // False when rules last stood still, and nothing it reads written since.
                if a.reads & st.dirty.rules == 0 {
                    continue;
                }
                if self.rule_holds(st, a, ctx)? {
                    firings += 1;
                    if firings > self.limits.rule_firings {
                        return Err(rt(RtKind::RunawayRule { rule: a.name.clone(), limit: self.limits.rule_firings }, a.span));
                    }
                    let pending = std::mem::take(&mut st.end_session);
                    self.run_consequences(st, r, ctx, 0)?;
                    let requested = st.end_session;
                    st.end_session |= pending;
                    if requested {
                        // This rule ends the session: firing stops here, the session ends, and
                        // rules fire afresh in the new one (a rule could not otherwise make its
                        // own condition false before the session is over).
                        return Ok(());
                    }
                    fired = true;
                }
            }
            if !fired {
                // Every rule is false now.
                st.dirty.rules = 0;
                return Ok(());
            }
        }
    }

    /// Moves the clock towards `t`, firing due timers in (due time, scheduling order), rules to
    /// a fixpoint after each. Stops early — at that timer's time — when a consequence asks to end
    /// the session, and says so. Once the clock has moved, rules that read the clock fire again.
    pub(super) fn advance_to(&self, st: &mut State, t: i64) -> Result<bool, RuntimeError> {
        self.advance(st, t, true)
    }

    /// [`Program::advance_to`]; `clock_rules` = false leaves the final firing of clock-reading
    /// rules to the caller (a session boundary fires rules once the new session has begun).
    pub(super) fn advance(&self, st: &mut State, t: i64, clock_rules: bool) -> Result<bool, RuntimeError> {
        let mut fired = 0u32;
        while let Some(&timer) = st.timers.last() {
            if timer.due > t {
                break;
            }
            fired += 1;
            if fired > self.limits.timers {
                return Err(self.runaway_timer(timer.cons));
            }
            st.timers.pop();
            st.clock = st.clock.max(timer.due);
            st.dirty.mark(crate::wgdl::parts::CLOCK);
            // A timer scheduled by an object deleted later in the same action dies with it.
            let dead = |id: u32| st.objects.get(id as usize).is_some_and(|o| !o.alive);
            if dead(timer.this) || (self.conses[timer.cons as usize].bind_instance() && dead(timer.bound)) {
                continue;
            }
            self.exec(st, timer.cons, Ctx { this: timer.this, bound: timer.bound }, 0)?;
            self.fire_rules(st)?;
            if st.end_session {
                return Ok(true);
            }
        }
        if t > st.clock {
            st.clock = t;
            st.dirty.mark(crate::wgdl::parts::CLOCK);
            if clock_rules && self.rules_read_time {
                self.fire_rules(st)?;
                return Ok(st.end_session);
            }
        }
        Ok(false)
    }

    #[cold]
    pub(super) fn runaway_timer(&self, c: ConsId) -> RuntimeError {
        let info = &self.conses[c as usize];
        rt(RtKind::RunawayTimers { consequence: info.name.clone(), limit: self.limits.timers }, info.span)
    }

    /// Ends the current session: the clock goes to the session's end, then through the pause
    /// (requests to end a session are void meanwhile); then rules fire for the new session.
    pub(super) fn end_session(&self, st: &mut State) -> Result<(), RuntimeError> {
        st.end_session = false;
        if self.session_length > 0 {
            let end = self.session_start(st.sessions).saturating_add(self.session_length);
            while self.advance_to(st, end)? {
                st.end_session = false;
            }
            st.sessions += 1;
            st.dirty.mark(crate::wgdl::parts::SESSIONS);
            let next = self.session_start(st.sessions);
            while self.advance(st, next, false)? {
                st.end_session = false;
            }
        } else {
            st.sessions += 1;
            st.dirty.mark(crate::wgdl::parts::SESSIONS);
        }
        self.fire_rules(st)
    }

    /// Ends sessions while a consequence asks for it (a rule of the new session may ask again).
    pub(super) fn settle(&self, st: &mut State) -> Result<(), RuntimeError> {
        let mut n = 0u32;
        while st.end_session {
            n += 1;
            if n > self.limits.rule_firings {
                return Err(rt(RtKind::RunawaySessions { limit: self.limits.rule_firings }, Span::default()));
            }
            self.end_session(st)?;
        }
        Ok(())
    }

    /// Lets `duration` seconds pass after a move: timers fire, the session may end.
    pub(super) fn pass_time(&self, st: &mut State, duration: i64) -> Result<(), RuntimeError> {
        if st.end_session {
            self.settle(st)?;
            if self.session_length > 0 {
                // The session is over: the clock already went through the pause.
                return Ok(());
            }
        }
        let target = st.clock.saturating_add(duration);
        loop {
            if self.session_length > 0 {
                let end = self.session_start(st.sessions).saturating_add(self.session_length);
                if self.advance_to(st, target.min(end))? {
                    // A timer ended the session early; the rest of the move's time is not spent.
                    return self.settle(st);
                }
                if target >= end {
                    self.end_session(st)?;
                    return self.settle(st);
                }
                return Ok(());
            }
            if !self.advance_to(st, target)? {
                return Ok(());
            }
            self.settle(st)?;
        }
    }

    /// Moves past every goal that holds, in order. The goal being pursued was false at the last
    /// check: it is evaluated again only if something it reads has changed since.
    pub(super) fn advance_goals(&self, st: &mut State) -> Result<(), RuntimeError> {
        let ctx = Ctx { this: NONE, bound: NONE };
        while (st.goal as usize) < self.goals.len() {
            let g = &self.goals[st.goal as usize];
            if g.reads & st.dirty.checks == 0 || self.eval(st, g.expr, ctx)? == 0 {
                break;
            }
            st.goal += 1;
            // The next goal has not been checked yet.
            st.dirty.checks = crate::wgdl::parts::ALL;
        }
        Ok(())
    }
}
