//! Expression tree → Cranelift IR: one function per expression, `(env, status) -> value`, with
//! one exit for giving up (`status = 1`, see the module's invariants). What it emits itself
//! ([`native`]) is state reads, arithmetic and comparisons over longs and doubles, `&&`/`||`
//! (which, as in the bytecode, yield the deciding operand, not 0/1), and grid cells; any other
//! operand (built-ins, aggregates, reads through object references, class constants) is handed
//! back to its own closure through [`super::call_closure`]. Structural facts of the program
//! (store size, grid bases and sizes) are immediates; parameters (class constants) are never
//! baked in, since a program's copies with other parameters share its compiled expressions.

use super::super::fast::{Leaf, T, lower};
use super::abi::Offsets as O;
use crate::wgdl::program::{Fx, ObjRec, Op, Program};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{AbiParam, Block, Function, InstBuilder, MemFlagsData, SigRef, Signature, Type, Value, types};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};

/// Whether the generator emits `t`'s root node itself (its operands may be handed back to
/// their closures, [`Gen::callback`]).
pub(super) fn native(p: &Program, t: &T) -> bool {
    match t {
        T::Leaf(l) => matches!(
            l,
            Leaf::Const(_)
                | Leaf::Slot(_)
                | Leaf::This(_)
                | Leaf::Bound(_)
                | Leaf::StoreOwn(_)
                | Leaf::StoreSum(_)
                | Leaf::ThisObj
                | Leaf::BoundObj
                | Leaf::Time
                | Leaf::Sessions
                | Leaf::Moves
                | Leaf::Actor
                | Leaf::Round
                | Leaf::Turns
                | Leaf::ToMove
        ),
        T::Un(op, ..) => matches!(op, Op::NegL | Op::NegD | Op::L2D | Op::Not | Op::Load),
        T::Bin(op, ..) => match op {
            Op::GridCell(g) => (*g as usize) < p.grids.len(),
            _ => matches!(
                op,
                Op::AddL
                    | Op::SubL
                    | Op::MulL
                    | Op::DivL
                    | Op::AddD
                    | Op::SubD
                    | Op::MulD
                    | Op::DivD
                    | Op::Eq
                    | Op::Ne
                    | Op::LtL
                    | Op::LeL
                    | Op::GtL
                    | Op::GeL
                    | Op::EqD
                    | Op::NeD
                    | Op::LtD
                    | Op::LeD
                    | Op::GtD
                    | Op::GeD
                    | Op::Xor
            ),
        },
        T::And(..) | T::Or(..) => true,
        T::Call(..) | T::Agg(_) => false,
    }
}

/// Whether the generator emits all of `t` itself, with no operand handed back to a closure, class
/// constants included (read from the program's constant table, [`super::abi::ConstTable`]): what the
/// generated move lister inlines ([`super::list`]), which has no closure environment to hand
/// operands back to.
pub(super) fn fully_native(p: &Program, t: &T) -> bool {
    match t {
        T::Leaf(l) => native(p, t) || matches!(l, Leaf::ThisConst(_) | Leaf::BoundConst(_) | Leaf::GodConst(_) | Leaf::NamedConst(..)),
        T::Un(Op::Field(_) | Op::FieldConst(_), a, _) => fully_native(p, a),
        T::Un(_, a, _) => native(p, t) && fully_native(p, a),
        T::Bin(_, a, b, _) | T::And(a, b) | T::Or(a, b) => native(p, t) && fully_native(p, a) && fully_native(p, b),
        T::Call(..) | T::Agg(_) => false,
    }
}

/// How many of `t`'s nodes the generator emits itself (an operand handed back to its closure
/// counts as one), for deciding whether generating it pays over its closure.
pub(super) fn native_size(p: &Program, t: &T) -> usize {
    if !native(p, t) {
        return 1;
    }
    match t {
        T::Leaf(_) | T::Agg(_) => 1,
        T::Un(_, a, _) => 1 + native_size(p, a),
        T::Bin(_, a, b, _) | T::And(a, b) | T::Or(a, b) => 1 + native_size(p, a) + native_size(p, b),
        T::Call(..) => 1,
    }
}

pub(super) struct Gen<'a, 'b> {
    pub(super) p: &'a Program,
    pub(super) b: FunctionBuilder<'b>,
    /// The `JitEnv` expressions read.
    pub(super) env: Value,
    pub(super) status: Value,
    /// Where the function gives up (sets the status word, returns 0).
    pub(super) fail: Block,
    pub(super) ptr: Type,
    /// The signature of [`super::call_closure`], imported once.
    callback: Option<SigRef>,
    pub(super) call_conv: CallConv,
    /// Class constants and reads through object references emitted (from the constant table and
    /// the object records), instead of handed back to their closures.
    pub(super) consts: bool,
    /// `JitEnv` fields held in variables instead of read from memory (the lister: it reads
    /// every field once and sets the owner's and binding's as it loops), by byte offset.
    locals: Vec<(i32, Variable)>,
}

/// Fills `func` (its signature `(env, status) -> i64`, [`super::abi::signature`]) with what `body`
/// emits from the entry block, then the giving-up block: the frame of every generated function.
pub(super) fn build(p: &Program, func: &mut Function, config: TargetFrontendConfig, body: impl FnOnce(&mut Gen)) {
    let mut fbc = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fbc);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let env = b.block_params(entry)[0];
    let status = b.block_params(entry)[1];
    let fail = b.create_block();
    let mut g = Gen::new(p, b, env, status, fail, &config);
    body(&mut g);
    g.finish(config);
}

/// Fills `func` with expression `t` of program `p` (`native` holds).
pub(super) fn function(p: &Program, t: &T, func: &mut Function, config: TargetFrontendConfig) {
    build(p, func, config, |g| {
        let v = g.expr(t);
        g.b.ins().return_(&[v]);
    });
}

impl<'a, 'b> Gen<'a, 'b> {
    pub(super) fn new(
        p: &'a Program,
        b: FunctionBuilder<'b>,
        env: Value,
        status: Value,
        fail: Block,
        config: &TargetFrontendConfig,
    ) -> Self {
        Gen {
            p,
            b,
            env,
            status,
            fail,
            ptr: config.pointer_type(),
            callback: None,
            call_conv: config.default_call_conv,
            consts: true,
            locals: Vec::new(),
        }
    }

    /// Reads every `JitEnv` field (the field at offset `off` is a pointer when `ptrs` holds it)
    /// into a variable, here, at the entry: from now on [`Gen::field`] reads the variable, and
    /// [`Gen::set`] sets it.
    pub(super) fn fields_to_locals(&mut self, all: &[i32], ptrs: &[i32]) {
        for &off in all {
            let ty = if ptrs.contains(&off) { self.ptr } else { types::I64 };
            let v = self.b.ins().load(ty, MemFlagsData::trusted(), self.env, off);
            let var = self.b.declare_var(ty);
            self.b.def_var(var, v);
            self.locals.push((off, var));
        }
    }

    /// Sets field `off`, held in a variable ([`Gen::fields_to_locals`]).
    pub(super) fn set(&mut self, off: i32, v: Value) {
        let var = self.locals.iter().find(|l| l.0 == off).expect("a field held in a variable").1;
        self.b.def_var(var, v);
    }

    /// Emits the giving-up block (status 1, return 0), seals and finalizes the function.
    pub(super) fn finish(mut self, config: TargetFrontendConfig) {
        self.b.switch_to_block(self.fail);
        let one = self.b.ins().iconst(types::I64, 1);
        self.b.ins().store(MemFlagsData::trusted(), one, self.status, 0);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().return_(&[zero]);
        self.b.seal_all_blocks();
        self.b.finalize(config);
    }

    /// A field of the `JitEnv`.
    pub(super) fn field(&mut self, off: i32) -> Value {
        match self.locals.iter().find(|l| l.0 == off) {
            Some(&(_, var)) => self.b.use_var(var),
            None => self.b.ins().load(types::I64, MemFlagsData::trusted(), self.env, off),
        }
    }

    /// A pointer field of the `JitEnv`.
    fn ptr_field(&mut self, off: i32) -> Value {
        match self.locals.iter().find(|l| l.0 == off) {
            Some(&(_, var)) => self.b.use_var(var),
            None => self.b.ins().load(self.ptr, MemFlagsData::trusted(), self.env, off),
        }
    }

    /// Continues only where `cond` (an i8) is false; gives up where it is true.
    pub(super) fn fail_if(&mut self, cond: Value) {
        let ok = self.b.create_block();
        self.b.ins().brif(cond, self.fail, &[], ok, &[]);
        self.b.switch_to_block(ok);
    }

    /// The slot at index `idx` (an i64), checked against the slots' length: the one load from
    /// the state (invariant 1).
    pub(super) fn slot(&mut self, idx: Value) -> Value {
        let len = self.field(O::LEN);
        let out = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, idx, len);
        self.fail_if(out);
        let base = self.ptr_field(O::SLOTS);
        let byte = self.b.ins().ishl_imm_u(idx, 3);
        let byte = if self.ptr == types::I64 { byte } else { self.b.ins().ireduce(self.ptr, byte) };
        let at = self.b.ins().iadd(base, byte);
        self.b.ins().load(types::I64, MemFlagsData::trusted(), at, 0)
    }

    pub(super) fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(types::I64, v)
    }

    fn bool(&mut self, c: Value) -> Value {
        self.b.ins().uextend(types::I64, c)
    }

    fn f(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(types::F64, MemFlagsData::new(), v)
    }

    fn i(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(types::I64, MemFlagsData::new(), v)
    }

    fn leaf(&mut self, l: Leaf) -> Value {
        match l {
            Leaf::Const(v) => self.iconst(v),
            Leaf::Slot(s) | Leaf::StoreOwn(s) => {
                let i = self.iconst(s as i64);
                self.slot(i)
            }
            Leaf::StoreSum(n) => {
                let sum = self.iconst((self.p.n_store_nodes() + n as usize) as i64);
                let own = self.iconst(n as i64);
                let (s, o) = (self.slot(sum), self.slot(own));
                self.b.ins().isub(s, o)
            }
            Leaf::This(o) | Leaf::Bound(o) => {
                let base = self.field(if matches!(l, Leaf::This(_)) { O::THIS_BASE } else { O::BOUND_BASE });
                let i = self.b.ins().iadd_imm_s(base, o as i64);
                self.slot(i)
            }
            Leaf::ThisConst(i) | Leaf::BoundConst(i) | Leaf::GodConst(i) | Leaf::NamedConst(_, i) if self.consts => {
                let god = match l {
                    Leaf::ThisConst(_) => self.field(O::THIS_GOD),
                    Leaf::BoundConst(_) => self.field(O::BOUND_GOD),
                    Leaf::GodConst(_) => self.field(O::BOUND),
                    Leaf::NamedConst(g, _) => self.iconst(g as i64),
                    _ => unreachable!(),
                };
                self.constant(god, i)
            }
            Leaf::ThisObj => self.field(O::THIS),
            Leaf::BoundObj => self.field(O::BOUND),
            Leaf::Time => self.field(O::CLOCK),
            Leaf::Sessions => self.field(O::SESSIONS),
            Leaf::Moves => self.field(O::MOVES),
            Leaf::Actor => self.field(O::ACTOR),
            Leaf::Round => self.field(O::ROUND),
            Leaf::Turns => self.field(O::TURNS),
            Leaf::ToMove => self.field(O::TO_MOVE),
            _ => unreachable!("not covered: {l:?}"),
        }
    }

    /// The address of object `o`'s record (`o` below the object count: checked by the caller).
    pub(super) fn record(&mut self, o: Value) -> Value {
        let objects = self.ptr_field(O::OBJECTS);
        let size = std::mem::size_of::<ObjRec>() as i64;
        let off = self.b.ins().imul_imm_s(o, size);
        let off = if self.ptr == types::I64 { off } else { self.b.ins().ireduce(self.ptr, off) };
        self.b.ins().iadd(objects, off)
    }

    /// The record of the live object that reference `v` names, or give up (a null, dead or
    /// unknown reference: the interpreter reports it).
    fn live_record(&mut self, v: Value) -> Value {
        let n = self.field(O::N_OBJECTS);
        let out = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, v, n);
        self.fail_if(out);
        let rec = self.record(v);
        let alive = self.b.ins().uload8(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, alive) as i32);
        let dead = self.b.ins().icmp_imm_s(IntCC::Equal, alive, 0);
        self.fail_if(dead);
        rec
    }

    /// Constant `i` of description `god` (an i64) from the constant table: the description
    /// checked against the table's count, the index against the description's constant count,
    /// the entry against the table's length (invariant 1).
    fn constant(&mut self, god: Value, i: u32) -> Value {
        let n = self.field(O::N_GODS);
        let out = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, god, n);
        self.fail_if(out);
        let at = self.ptr_field(O::CONSTS_AT);
        let byte = self.b.ins().ishl_imm_u(god, 4);
        let byte = if self.ptr == types::I64 { byte } else { self.b.ins().ireduce(self.ptr, byte) };
        let entry = self.b.ins().iadd(at, byte);
        let off = self.b.ins().load(types::I64, MemFlagsData::trusted(), entry, 0);
        let len = self.b.ins().load(types::I64, MemFlagsData::trusted(), entry, 8);
        let short = self.b.ins().icmp_imm_u(IntCC::UnsignedLessThanOrEqual, len, i as i64);
        self.fail_if(short);
        let idx = self.b.ins().iadd_imm_s(off, i as i64);
        let flat = self.field(O::CONSTS_LEN);
        let past = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, idx, flat);
        self.fail_if(past);
        let base = self.ptr_field(O::CONSTS);
        let byte = self.b.ins().ishl_imm_u(idx, 3);
        let byte = if self.ptr == types::I64 { byte } else { self.b.ins().ireduce(self.ptr, byte) };
        let addr = self.b.ins().iadd(base, byte);
        self.b.ins().load(types::I64, MemFlagsData::trusted(), addr, 0)
    }

    /// Operand `t` handed back to its closure: a call to [`super::call_closure`] with the
    /// closure's address (leaked, as the code that holds it), then a check of the status word.
    fn callback(&mut self, t: &T) -> Value {
        let fx: &'static Fx = Box::leak(Box::new(lower(t.clone())));
        let sig = match self.callback {
            Some(s) => s,
            None => {
                let mut sig = Signature::new(self.call_conv);
                sig.params.extend([AbiParam::new(self.ptr), AbiParam::new(self.ptr), AbiParam::new(self.ptr)]);
                sig.returns.push(AbiParam::new(types::I64));
                let s = self.b.import_signature(sig);
                self.callback = Some(s);
                s
            }
        };
        let helper: extern "C" fn(*const super::abi::JitEnv, *const Fx, *mut u64) -> i64 = super::call_closure;
        let callee = self.b.ins().iconst(self.ptr, helper as usize as i64);
        let fxp = self.b.ins().iconst(self.ptr, fx as *const Fx as usize as i64);
        let call = self.b.ins().call_indirect(sig, callee, &[self.env, fxp, self.status]);
        let v = self.b.inst_results(call)[0];
        let s = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.status, 0);
        self.fail_if(s);
        v
    }

    pub(super) fn expr(&mut self, t: &T) -> Value {
        if !(native(self.p, t) || self.consts && fully_native(self.p, t)) {
            return self.callback(t);
        }
        match t {
            T::Leaf(l) => self.leaf(*l),
            T::Un(op, a, _) => {
                let a = self.expr(a);
                match op {
                    Op::NegL => {
                        let min = self.b.ins().icmp_imm_s(IntCC::Equal, a, i64::MIN);
                        self.fail_if(min);
                        self.b.ins().ineg(a)
                    }
                    Op::NegD => {
                        let x = self.f(a);
                        let n = self.b.ins().fneg(x);
                        self.i(n)
                    }
                    Op::L2D => {
                        let x = self.b.ins().fcvt_from_sint(types::F64, a);
                        self.i(x)
                    }
                    Op::Not => {
                        let c = self.b.ins().icmp_imm_s(IntCC::Equal, a, 0);
                        self.bool(c)
                    }
                    Op::Load => self.slot(a),
                    // Through an object reference (`fully_native`).
                    Op::Field(o) => {
                        let rec = self.live_record(a);
                        let base = self.b.ins().uload32(MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, base) as i32);
                        let i = self.b.ins().iadd_imm_s(base, *o as i64);
                        self.slot(i)
                    }
                    Op::FieldConst(i) => {
                        let rec = self.live_record(a);
                        let god = self.b.ins().uload16(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, god) as i32);
                        self.constant(god, *i)
                    }
                    _ => unreachable!("not covered: {op:?}"),
                }
            }
            T::Bin(op, a, b, _) => {
                let (x, y) = (self.expr(a), self.expr(b));
                self.bin(*op, x, y)
            }
            T::And(a, b) | T::Or(a, b) => {
                let and = matches!(t, T::And(..));
                let x = self.expr(a);
                let rhs = self.b.create_block();
                let merge = self.b.create_block();
                self.b.append_block_param(merge, types::I64);
                // `a && b`: a when a is 0, else b; `a || b`: a when a is not 0, else b.
                if and {
                    self.b.ins().brif(x, rhs, &[], merge, &[x.into()]);
                } else {
                    self.b.ins().brif(x, merge, &[x.into()], rhs, &[]);
                }
                self.b.switch_to_block(rhs);
                let y = self.expr(b);
                self.b.ins().jump(merge, &[y.into()]);
                self.b.switch_to_block(merge);
                self.b.block_params(merge)[0]
            }
            _ => unreachable!("not covered"),
        }
    }

    fn bin(&mut self, op: Op, x: Value, y: Value) -> Value {
        match op {
            Op::AddL | Op::SubL | Op::MulL => {
                let (r, over) = match op {
                    Op::AddL => self.b.ins().sadd_overflow(x, y),
                    Op::SubL => self.b.ins().ssub_overflow(x, y),
                    _ => self.b.ins().smul_overflow(x, y),
                };
                self.fail_if(over);
                r
            }
            Op::DivL => {
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                self.fail_if(zero);
                let min = self.b.ins().icmp_imm_s(IntCC::Equal, x, i64::MIN);
                let neg1 = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                let both = self.b.ins().band(min, neg1);
                self.fail_if(both);
                self.b.ins().sdiv(x, y)
            }
            Op::AddD | Op::SubD | Op::MulD | Op::DivD => {
                let (a, b) = (self.f(x), self.f(y));
                if op == Op::DivD {
                    let z = self.b.ins().f64const(0.0);
                    let zero = self.b.ins().fcmp(FloatCC::Equal, b, z);
                    self.fail_if(zero);
                }
                let r = match op {
                    Op::AddD => self.b.ins().fadd(a, b),
                    Op::SubD => self.b.ins().fsub(a, b),
                    Op::MulD => self.b.ins().fmul(a, b),
                    _ => self.b.ins().fdiv(a, b),
                };
                self.i(r)
            }
            Op::Eq | Op::Ne | Op::LtL | Op::LeL | Op::GtL | Op::GeL => {
                let cc = match op {
                    Op::Eq => IntCC::Equal,
                    Op::Ne => IntCC::NotEqual,
                    Op::LtL => IntCC::SignedLessThan,
                    Op::LeL => IntCC::SignedLessThanOrEqual,
                    Op::GtL => IntCC::SignedGreaterThan,
                    _ => IntCC::SignedGreaterThanOrEqual,
                };
                let c = self.b.ins().icmp(cc, x, y);
                self.bool(c)
            }
            Op::EqD | Op::NeD | Op::LtD | Op::LeD | Op::GtD | Op::GeD => {
                let (a, b) = (self.f(x), self.f(y));
                let cc = match op {
                    Op::EqD => FloatCC::Equal,
                    // Rust's `!=` on floats: true when either is NaN.
                    Op::NeD => FloatCC::NotEqual,
                    Op::LtD => FloatCC::LessThan,
                    Op::LeD => FloatCC::LessThanOrEqual,
                    Op::GtD => FloatCC::GreaterThan,
                    _ => FloatCC::GreaterThanOrEqual,
                };
                let c = self.b.ins().fcmp(cc, a, b);
                self.bool(c)
            }
            Op::Xor => {
                let a = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                let b = self.b.ins().icmp_imm_s(IntCC::NotEqual, y, 0);
                let c = self.b.ins().bxor(a, b);
                self.bool(c)
            }
            Op::GridCell(g) => {
                // The cell's slot index (a `Load` reads it), or give up off the grid.
                let gi = &self.p.grids[g as usize];
                let (w, h, base) = (gi.width as i64, gi.height as i64, gi.base as i64);
                let xo = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, x, w);
                let yo = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, y, h);
                let off = self.b.ins().bor(xo, yo);
                self.fail_if(off);
                let row = self.b.ins().imul_imm_s(y, w);
                let cell = self.b.ins().iadd(row, x);
                self.b.ins().iadd_imm_s(cell, base)
            }
            _ => unreachable!("not covered: {op:?}"),
        }
    }
}
