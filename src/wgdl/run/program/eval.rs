//! The bytecode interpreter: one compiled expression evaluated on a fixed-size stack. It is the
//! reference the closures of `wgdl::fast` are tested against, and the fallback for what they do not
//! lower; the object, field and grid reads it shares with them are here too.

use super::*;

impl Program {
    /// Interprets one compiled expression's bytecode: the reference semantics that the closures
    /// of [`crate::wgdl::fast`] (what [`Program::eval`] runs) are tested against.
    pub(in crate::wgdl) fn eval_bytecode(&self, st: &State, e: ExprId, ctx: Ctx) -> Result<i64, RuntimeError> {
        let code = &self.code[e.start as usize..(e.start + e.len) as usize];
        let mut stack = [0i64; STACK];
        let mut sp = 0usize;
        let mut pc = 0usize;
        macro_rules! push {
            ($v:expr) => {{
                stack[sp] = $v;
                sp += 1;
            }};
        }
        macro_rules! bin {
            (|$a:ident, $b:ident| $body:expr) => {{
                sp -= 1;
                let $b = stack[sp];
                let $a = stack[sp - 1];
                stack[sp - 1] = $body;
            }};
        }
        macro_rules! bind {
            (|$a:ident, $b:ident| $body:expr) => {{
                sp -= 1;
                let $b = f64::from_bits(stack[sp] as u64);
                let $a = f64::from_bits(stack[sp - 1] as u64);
                stack[sp - 1] = $body;
            }};
        }
        let d = |v: f64| v.to_bits() as i64;
        while pc < code.len() {
            match code[pc] {
                Op::Const(v) => push!(v),
                Op::Slot(s) => push!(st.slots[s as usize]),
                Op::This(o) => push!(st.slots[(st.objects[ctx.this as usize].base + o) as usize]),
                Op::Bound(o) => push!(st.slots[(st.objects[ctx.bound as usize].base + o) as usize]),
                Op::ThisConst(i) => push!(self.gods[st.objects[ctx.this as usize].god as usize].consts[i as usize]),
                Op::BoundConst(i) => push!(self.gods[st.objects[ctx.bound as usize].god as usize].consts[i as usize]),
                Op::GodInit(i) => push!(self.gods[ctx.bound as usize].init[i as usize]),
                Op::GodConst(i) => push!(self.gods[ctx.bound as usize].consts[i as usize]),
                Op::NamedConst(g, i) => push!(self.gods[g as usize].consts[i as usize]),
                Op::ThisObj => push!(ctx.this as i64),
                Op::BoundObj => push!(ctx.bound as i64),
                Op::Field(o) => {
                    let obj = self.deref(st, stack[sp - 1], e.start as usize + pc)?;
                    stack[sp - 1] = st.slots[(obj.base + o) as usize];
                }
                Op::FieldConst(i) => {
                    let obj = self.deref(st, stack[sp - 1], e.start as usize + pc)?;
                    stack[sp - 1] = self.gods[obj.god as usize].consts[i as usize];
                }
                Op::NameOf => {
                    let obj = self.deref(st, stack[sp - 1], e.start as usize + pc)?;
                    stack[sp - 1] = self.gods[obj.god as usize].name_sym;
                }
                Op::GodName => push!(self.gods[ctx.bound as usize].name_sym),
                Op::StoreOwn(n) => push!(st.slots[n as usize]),
                Op::StoreSum(n) => {
                    let nn = self.n_store_nodes();
                    push!(st.slots[nn + n as usize] - st.slots[n as usize])
                }
                Op::Time => push!(st.clock),
                Op::SessionTime => push!(self.session_time(st)),
                Op::Sessions => push!(st.sessions),
                Op::Moves => push!(st.moves as i64),
                Op::AddL | Op::SubL | Op::MulL | Op::DivL | Op::ModL => {
                    let (a, b) = (stack[sp - 2], stack[sp - 1]);
                    let at = self.spans[e.start as usize + pc];
                    if matches!(code[pc], Op::DivL | Op::ModL) && b == 0 {
                        return Err(rt(RtKind::DivisionByZero, at));
                    }
                    stack[sp - 2] = checked_long(code[pc], a, b).map_err(|k| rt(k, at))?;
                    sp -= 1;
                }
                Op::AddD => bind!(|a, b| d(a + b)),
                Op::SubD => bind!(|a, b| d(a - b)),
                Op::MulD => bind!(|a, b| d(a * b)),
                Op::DivD => {
                    if f64::from_bits(stack[sp - 1] as u64) == 0.0 {
                        return Err(rt(RtKind::DivisionByZero, self.spans[e.start as usize + pc]));
                    }
                    bind!(|a, b| d(a / b))
                }
                Op::NegL => {
                    let a = stack[sp - 1];
                    stack[sp - 1] =
                        a.checked_neg().ok_or_else(|| rt(RtKind::Overflow { a: 0, op: "-", b: a }, self.spans[e.start as usize + pc]))?;
                }
                Op::NegD => stack[sp - 1] = d(-f64::from_bits(stack[sp - 1] as u64)),
                Op::L2D => stack[sp - 1] = d(stack[sp - 1] as f64),
                Op::L2DUnder => stack[sp - 2] = d(stack[sp - 2] as f64),
                Op::Eq => bin!(|a, b| (a == b) as i64),
                Op::Ne => bin!(|a, b| (a != b) as i64),
                Op::LtL => bin!(|a, b| (a < b) as i64),
                Op::LeL => bin!(|a, b| (a <= b) as i64),
                Op::GtL => bin!(|a, b| (a > b) as i64),
                Op::GeL => bin!(|a, b| (a >= b) as i64),
                Op::EqD => bind!(|a, b| (a == b) as i64),
                Op::NeD => bind!(|a, b| (a != b) as i64),
                Op::LtD => bind!(|a, b| (a < b) as i64),
                Op::LeD => bind!(|a, b| (a <= b) as i64),
                Op::GtD => bind!(|a, b| (a > b) as i64),
                Op::GeD => bind!(|a, b| (a >= b) as i64),
                Op::Not => stack[sp - 1] = (stack[sp - 1] == 0) as i64,
                Op::Xor => bin!(|a, b| ((a != 0) != (b != 0)) as i64),
                Op::AndJump(off) => {
                    if stack[sp - 1] == 0 {
                        pc += off as usize;
                        continue;
                    }
                    sp -= 1;
                }
                Op::OrJump(off) => {
                    if stack[sp - 1] != 0 {
                        pc += off as usize;
                        continue;
                    }
                    sp -= 1;
                }
                Op::Skip(n) => {
                    pc += n as usize + 1;
                    continue;
                }
                Op::Call(b, g, n) => {
                    let n = n as usize;
                    let v = b.run()(&crate::wgdl::program::Env::new(self, st, ctx), g, &stack[sp - n..sp], e.start as usize + pc)?;
                    sp -= n;
                    push!(v)
                }
                Op::GridCell(g) => {
                    let gi = &self.grids[g as usize];
                    let (x, y) = (stack[sp - 2], stack[sp - 1]);
                    if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
                        return Err(self.off_grid(g, x, y, e.start as usize + pc));
                    }
                    sp -= 1;
                    stack[sp - 1] = gi.base as i64 + y * gi.width as i64 + x;
                }
                Op::Load => stack[sp - 1] = st.slots[stack[sp - 1] as usize],
                Op::GridIndex(g) => stack[sp - 1] = self.grid_number(g, stack[sp - 1], e.start as usize + pc)?,
                Op::StepCell(t, k) => push!(self.board.tables[t as usize].moves[ctx.bound as usize][k as usize] as i64),
                Op::Agg(a) => push!(self.aggregate(st, a, ctx)?),
                Op::GridSumRuns(g, a) => stack[sp - 1] = self.tile_sum_runs(st, g, stack[sp - 1], &self.aggs[a as usize], ctx.this)?,
                Op::Actor => push!(if st.actor == NONE { NULL } else { st.actor as i64 }),
                Op::Round => push!(st.round as i64),
                Op::Turns => push!(st.turns as i64),
                Op::ToMove => push!(st.to_move as i64),
            }
            pc += 1;
        }
        debug_assert_eq!(sp, 1);
        Ok(stack[0])
    }

    #[inline]
    pub(in crate::wgdl) fn deref(&self, st: &State, v: i64, op_index: usize) -> Result<ObjRec, RuntimeError> {
        match st.objects.get(v as usize) {
            Some(o) if v >= 0 && o.alive => Ok(*o),
            _ => Err(self.deref_error(st, v, op_index)),
        }
    }

    /// Attribute `o` of object `v`, which must be live (else the error of the op at `op_index`).
    #[inline(always)]
    pub(in crate::wgdl) fn field(&self, st: &State, v: i64, o: u32, op_index: usize) -> Result<i64, RuntimeError> {
        match st.objects.get(v as usize) {
            Some(ob) if v >= 0 && ob.alive => Ok(st.slots[(ob.base + o) as usize]),
            _ => Err(self.deref_error(st, v, op_index)),
        }
    }

    /// `game.sessionTime`: within the pause (the next session has not begun) it is 0.
    #[inline]
    pub(in crate::wgdl) fn session_time(&self, st: &State) -> i64 {
        st.clock.saturating_sub(self.session_start(st.sessions)).max(0)
    }

    /// Grid `g`'s cell (x, y), or the off-grid error of the `GridCell` op at `op_index`.
    #[inline]
    pub(in crate::wgdl) fn grid_read(&self, st: &State, g: u16, x: i64, y: i64, op_index: usize) -> Result<i64, RuntimeError> {
        let gi = &self.grids[g as usize];
        if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
            return Err(self.off_grid(g, x, y, op_index));
        }
        Ok(st.slots[(gi.base as i64 + y * gi.width as i64 + x) as usize])
    }

    /// The slot of grid `g`'s cell (x, y), or the off-grid error of the `GridCell` op at
    /// `op_index`.
    #[inline]
    pub(in crate::wgdl) fn grid_index(&self, g: u16, x: i64, y: i64, op_index: usize) -> Result<usize, RuntimeError> {
        let gi = &self.grids[g as usize];
        if x < 0 || y < 0 || x >= gi.width as i64 || y >= gi.height as i64 {
            return Err(self.off_grid(g, x, y, op_index));
        }
        Ok((gi.base as i64 + y * gi.width as i64 + x) as usize)
    }

    /// The absolute slot of cell number `c` of grid `g` (`board[c]`), or the error naming the
    /// grid, the number and the valid range.
    #[inline]
    pub(in crate::wgdl) fn grid_number(&self, g: u16, c: i64, op_index: usize) -> Result<i64, RuntimeError> {
        let gi = &self.grids[g as usize];
        let n = gi.width as i64 * gi.height as i64;
        if c < 0 || c >= n {
            return Err(rt(RtKind::BadCell { grid: gi.name.clone(), c, last: n - 1 }, self.spans[op_index]));
        }
        Ok(gi.base as i64 + c)
    }

    #[cold]
    pub(in crate::wgdl) fn off_grid(&self, g: u16, x: i64, y: i64, op_index: usize) -> RuntimeError {
        let gi = &self.grids[g as usize];
        let (grid, w, h) = (gi.name.clone(), gi.width, gi.height);
        rt(RtKind::OffGrid { grid, x, y, w, h }, self.spans[op_index])
    }

    #[cold]
    pub(in crate::wgdl) fn deref_error(&self, st: &State, v: i64, op_index: usize) -> RuntimeError {
        let span = self.spans[op_index];
        let attr = self.source.slice(span).to_string();
        if v >= 0 && (v as usize) < st.objects.len() { rt(RtKind::DeadObject { attr }, span) } else { rt(RtKind::NullPath { attr }, span) }
    }

    pub(super) fn session_start(&self, k: i64) -> i64 {
        // Saturating, like all clock arithmetic: huge settings end time, they do not wrap it.
        k.saturating_mul(self.session_length.saturating_add(self.session_pause))
    }

    pub(super) fn write(&self, st: &mut State, place: Place, ctx: Ctx, v: i64) -> Result<(), RuntimeError> {
        let idx = match place {
            Place::Slot(s) => s,
            Place::This(o) => st.objects[ctx.this as usize].base + o,
            Place::Bound(o) => st.objects[ctx.bound as usize].base + o,
            Place::Field(e, o) => {
                let obj = self.eval(st, e, ctx)?;
                self.deref(st, obj, (e.start + e.len - 1) as usize)?.base + o
            }
            Place::Dyn(e) => self.eval(st, e, ctx)? as u32,
        };
        if !matches!(place, Place::Dyn(_)) {
            st.dirty.mark(crate::wgdl::parts::slot(idx as usize));
        }
        st.slots[idx as usize] = v;
        Ok(())
    }
}
