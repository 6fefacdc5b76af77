//! The generated move lister: a program's candidate moves (what
//! `Program::candidate_actions_inner` lists before move filters) as one generated function —
//! the loop over the objects in creation order, the class's actor gate, each owned action in
//! declaration order, its conditions inline, its bindings looped in the interpreter's order
//! (descriptions, live objects of the bound class, numbers), each move handed to [`push`]. An
//! action the lister does not inline — a condition with an operand it does not emit (built-ins,
//! aggregates, paths longer than one hop), `unless`, a `forEveryHex` binding, the swap and row
//! fast paths — is listed for that owner by the interpreter's own code through [`slow`], at its
//! place in the order, so that the two tiers' lists compare equal. Where generated code meets anything but
//! the plain path (an index out of range, an overflow, an error in a slow action), it gives up,
//! and the caller lists the moves again in the interpreter, which reports the error with its
//! span.
//!
//! Conditions are pure, so the lister may evaluate them where the interpreter would not (the
//! owner-free ones once per owner instead of once per listing, an action's actor comparison
//! again after its class's gate): the list is the same, and an error met only by generated code
//! makes the interpreter list again, which then does not meet it.

use super::emit::{Gen, build, fully_native};
use super::{ConstTable, JitEnv, Offsets as O};
use crate::wgdl::fast::T;
use crate::wgdl::program::{Action, ActionId, ActorGate, BindKind, ClassId, GodId, NONE, NULL, ObjRec, Program, RuntimeError, State};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, Block, InstBuilder, MemFlagsData, SigRef, Signature, Value, types};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::Variable;

/// What the lister reads: the expressions' [`JitEnv`] (read once at entry; the owner and the
/// binding then live in variables), and the caller's [`Callbacks`].
#[repr(C)]
pub(super) struct ListEnv {
    jit: JitEnv,
    /// 1 when `policyOnly` actions are left out.
    skip_hidden: u64,
    cb: *mut std::ffi::c_void,
}

/// Byte offsets of [`ListEnv`]'s own fields (after its `JitEnv`).
struct L;
impl L {
    const SKIP_HIDDEN: i32 = 176;
}
const _: () = assert!(std::mem::offset_of!(ListEnv, skip_hidden) == L::SKIP_HIDDEN as usize);

/// What [`push`] and [`slow`] reach through [`ListEnv::cb`].
struct Callbacks<'a> {
    out: &'a mut Vec<Action>,
    slow: &'a mut dyn FnMut(ActionId, u32, &mut Vec<Action>) -> Result<(), RuntimeError>,
}

/// A move found by generated code.
extern "C" fn push(env: *const ListEnv, def: u64, this: u64, bound: u64) {
    // SAFETY: generated code passes the `ListEnv` it was handed, alive for the call, whose `cb`
    // points to the `Callbacks` of `Lister::run`, borrowed by nothing else while generated code
    // runs (invariant 2).
    let cb = unsafe { &mut *((*env).cb as *mut Callbacks) };
    cb.out.push(Action { def: def as ActionId, this: this as u32, bound: bound as u32 });
}

/// Action `a` of owner `this` listed by the interpreter; an error (or a panic) sets the status.
extern "C" fn slow(env: *const ListEnv, a: u64, this: u64, status: *mut u64) {
    // SAFETY: as for `push`; `status` is the caller's status word.
    let (cb, status) = unsafe { (&mut *((*env).cb as *mut Callbacks), &mut *status) };
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (cb.slow)(a as ActionId, this as u32, cb.out)));
    if !matches!(ok, Ok(Ok(()))) {
        *status = 1;
    }
}

/// The lister's signature: `(env, status) -> 0`.
type RawList = unsafe extern "C" fn(*mut ListEnv, *mut u64) -> i64;

/// A program's generated move lister.
#[derive(Clone, Copy)]
pub(in crate::wgdl) struct Lister {
    f: RawList,
    /// How many actions it inlines, of how many player actions (for tests and the bench).
    pub inlined: usize,
    pub actions: usize,
}

impl Lister {
    /// Lists the candidate moves of `st` into `out` (appended), `slow` listing an action the
    /// lister does not inline for one owner. `false`: the generated code gave up, and `out`
    /// holds part of a list (the caller lists again in the interpreter).
    pub(in crate::wgdl) fn run(
        &self,
        p: &Program,
        st: &State,
        consts: &ConstTable,
        skip_hidden: bool,
        out: &mut Vec<Action>,
        slow: &mut dyn FnMut(ActionId, u32, &mut Vec<Action>) -> Result<(), RuntimeError>,
    ) -> bool {
        let mut cb = Callbacks { out, slow };
        let mut env = ListEnv {
            jit: JitEnv {
                slots: st.slots.as_ptr(),
                len: st.slots.len() as u64,
                this_base: 0,
                bound_base: 0,
                this: NONE as i64,
                bound: NONE as i64,
                clock: st.clock,
                sessions: st.sessions,
                moves: st.moves as i64,
                actor: if st.actor == NONE { NULL } else { st.actor as i64 },
                round: st.round as i64,
                turns: st.turns as i64,
                to_move: st.to_move as i64,
                env: std::ptr::null(),
                consts: consts.flat.as_ptr(),
                consts_len: consts.flat.len() as u64,
                consts_at: consts.at.as_ptr(),
                n_gods: consts.at.len().min(p.gods.len()) as u64,
                this_god: -1,
                bound_god: -1,
                objects: st.objects.as_ptr(),
                n_objects: st.objects.len() as u64,
            },
            skip_hidden: skip_hidden as u64,
            cb: &mut cb as *mut Callbacks as *mut std::ffi::c_void,
        };
        let mut status = 0u64;
        // SAFETY: `f` was generated by `lister` with the signature of `RawList` (invariant 4)
        // and is never freed (invariant 3); it reads `env`, the objects below `n_objects`, the
        // slots below `len` and the constant table within its lengths, all borrowed for the call
        // (invariants 1 and 2); it writes only `status`.
        unsafe { (self.f)(&mut env, &mut status) };
        status == 0
    }
}

/// How the lister lists one action.
enum How {
    /// By the interpreter's code, for each owner ([`slow`]).
    Slow,
    /// Inline: the conditions up to `owner` once per owner, the rest per binding.
    Inline { owner: Vec<T>, rest: Vec<T>, bind: Bind },
}

enum Bind {
    None,
    Gods(Vec<GodId>),
    /// The live objects whose class is one of these (the bound class and its subclasses).
    Objects(Vec<ClassId>),
    Numbers(u32, u32),
}

fn plan(p: &Program, a: ActionId) -> How {
    let info = &p.actions[a as usize];
    if !info.unless.is_empty() {
        return How::Slow;
    }
    let bind = match info.bind {
        BindKind::None => Bind::None,
        BindKind::God(c) => Bind::Gods(p.classes[c as usize].gods.clone()),
        BindKind::Instance(c) => Bind::Objects((0..p.classes.len() as ClassId).filter(|&k| p.is_sub(k, c)).collect()),
        BindKind::Number(lo, hi)
            if info.swap_filter.is_none() && info.row_scan.is_none() && info.cell_tests.is_none() && hi >= lo && hi - lo < 4096 =>
        {
            Bind::Numbers(lo, hi)
        }
        _ => return How::Slow,
    };
    // Every operand emitted: handing an operand back to its closure would make an environment
    // per call, which measured slower than the interpreter's listing (the arena's abilities,
    // whose range and sight tests are built-ins: 0.87× its interpreted playouts).
    let trees: Vec<T> = info.conditions.iter().map(|&e| p.live_tree(e)).collect();
    if !trees.iter().all(|t| fully_native(p, t)) {
        return How::Slow;
    }
    let rest = trees[info.owner_conds.min(trees.len())..].to_vec();
    let owner = trees[..info.owner_conds.min(trees.len())].to_vec();
    How::Inline { owner, rest, bind }
}

/// Generates program `p`'s move lister; `None` where the host has no code generator, or nothing
/// would be inlined (the interpreter lists as well).
pub(in crate::wgdl) fn lister(p: &Program) -> Option<Lister> {
    let mut plans: Vec<Option<How>> = (0..p.actions.len()).map(|_| None).collect();
    let mut inlined = 0;
    for c in &p.classes {
        for &a in &c.actions {
            if plans[a as usize].is_none() {
                let h = plan(p, a);
                inlined += matches!(h, How::Inline { .. }) as usize;
                plans[a as usize] = Some(h);
            }
        }
    }
    let actions = plans.iter().filter(|h| h.is_some()).count();
    if inlined == 0 {
        return None;
    }
    let code = super::define(|func, config| function(p, &plans, func, config))?;
    // SAFETY: `code` is the entry of a function just generated with `signature`, which is
    // `RawList`'s (invariant 4).
    let f = unsafe { std::mem::transmute::<*const u8, RawList>(code) };
    Some(Lister { f, inlined, actions })
}

/// The callbacks' signatures and addresses, imported once.
struct Calls {
    push: SigRef,
    slow: SigRef,
}

fn function(p: &Program, plans: &[Option<How>], func: &mut cranelift_codegen::ir::Function, config: TargetFrontendConfig) {
    build(p, func, config, |g| {
        // Every field read once; the owner's and the binding's live in variables.
        g.fields_to_locals(
            &[
                O::SLOTS,
                O::LEN,
                O::THIS_BASE,
                O::BOUND_BASE,
                O::THIS,
                O::BOUND,
                O::CLOCK,
                O::SESSIONS,
                O::MOVES,
                O::ACTOR,
                O::ROUND,
                O::TURNS,
                O::TO_MOVE,
                O::CONSTS,
                O::CONSTS_LEN,
                O::CONSTS_AT,
                O::N_GODS,
                O::THIS_GOD,
                O::BOUND_GOD,
                O::OBJECTS,
                O::N_OBJECTS,
            ],
            &[O::SLOTS, O::CONSTS, O::CONSTS_AT, O::OBJECTS],
        );
        let ptr = g.ptr;
        let calls = {
            let mut push = Signature::new(g.call_conv);
            push.params.extend([AbiParam::new(ptr), AbiParam::new(types::I64), AbiParam::new(types::I64), AbiParam::new(types::I64)]);
            let mut slow = Signature::new(g.call_conv);
            slow.params.extend([AbiParam::new(ptr), AbiParam::new(types::I64), AbiParam::new(types::I64), AbiParam::new(ptr)]);
            Calls { push: g.b.import_signature(push), slow: g.b.import_signature(slow) }
        };
        let oid = g.b.declare_var(types::I64);
        let zero = g.iconst(0);
        g.b.def_var(oid, zero);
        let head = g.b.create_block();
        let body = g.b.create_block();
        let next = g.b.create_block();
        let exit = g.b.create_block();
        g.b.ins().jump(head, &[]);

        // head: while oid < n_objects
        g.b.switch_to_block(head);
        let o = g.b.use_var(oid);
        let n = g.field(O::N_OBJECTS);
        let done = g.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, o, n);
        g.b.ins().brif(done, exit, &[], body, &[]);

        // body: the record of object oid, live, dispatched on its class
        g.b.switch_to_block(body);
        let rec = object(g, o);
        let alive = g.b.ins().uload8(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, alive) as i32);
        let live = g.b.create_block();
        g.b.ins().brif(alive, live, &[], next, &[]);
        g.b.switch_to_block(live);
        let class = g.b.ins().uload16(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, class) as i32);
        let base = g.b.ins().uload32(MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, base) as i32);
        let god = g.b.ins().uload16(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, god) as i32);
        // The owner's fields, for every condition of its actions.
        store(g, o, O::THIS);
        store(g, base, O::THIS_BASE);
        store(g, god, O::THIS_GOD);
        for (k, c) in p.classes.iter().enumerate() {
            if c.actions.is_empty() {
                continue;
            }
            let this_class = g.b.create_block();
            let other = g.b.create_block();
            let is = g.b.ins().icmp_imm_u(IntCC::Equal, class, k as i64);
            g.b.ins().brif(is, this_class, &[], other, &[]);
            g.b.switch_to_block(this_class);
            // The class's actor gate: an object that fails it has no move.
            if let Some(gate) = c.actor_gate {
                let owner = match gate {
                    ActorGate::This => o,
                    ActorGate::Attr(off) => {
                        let i = g.b.ins().iadd_imm_s(base, off as i64);
                        g.slot(i)
                    }
                };
                let actor = g.field(O::ACTOR);
                let open = g.b.ins().icmp(IntCC::Equal, owner, actor);
                let go = g.b.create_block();
                g.b.ins().brif(open, go, &[], next, &[]);
                g.b.switch_to_block(go);
            }
            for &a in &c.actions {
                let after = g.b.create_block();
                let how = plans[a as usize].as_ref().expect("planned");
                if p.actions[a as usize].policy_only {
                    let skip = g.b.ins().load(types::I64, MemFlagsData::trusted(), g.env, L::SKIP_HIDDEN);
                    let go = g.b.create_block();
                    g.b.ins().brif(skip, after, &[], go, &[]);
                    g.b.switch_to_block(go);
                }
                action(g, &calls, a, how, o, after);
                g.b.ins().jump(after, &[]);
                g.b.switch_to_block(after);
            }
            g.b.ins().jump(next, &[]);
            g.b.switch_to_block(other);
        }
        g.b.ins().jump(next, &[]);

        // next: oid + 1
        g.b.switch_to_block(next);
        let o = g.b.use_var(oid);
        let o1 = g.b.ins().iadd_imm_s(o, 1);
        g.b.def_var(oid, o1);
        g.b.ins().jump(head, &[]);

        g.b.switch_to_block(exit);
        let z = g.iconst(0);
        g.b.ins().return_(&[z]);
    });
}

/// The address of object `o`'s record (`o` below the object count, checked by the loops).
fn object(g: &mut Gen, o: Value) -> Value {
    g.record(o)
}

/// Sets the owner's or the binding's field `off` (a variable).
fn store(g: &mut Gen, v: Value, off: i32) {
    g.set(off, v);
}

/// Branches to `skip` unless every condition of `conds` holds.
fn conditions(g: &mut Gen, conds: &[T], skip: Block) {
    for t in conds {
        let v = g.expr(t);
        let go = g.b.create_block();
        g.b.ins().brif(v, go, &[], skip, &[]);
        g.b.switch_to_block(go);
    }
}

fn call_push(g: &mut Gen, calls: &Calls, a: ActionId, this: Value, bound: Value) {
    let f: extern "C" fn(*const ListEnv, u64, u64, u64) = push;
    let callee = g.b.ins().iconst(g.ptr, f as usize as i64);
    let def = g.iconst(a as i64);
    g.b.ins().call_indirect(calls.push, callee, &[g.env, def, this, bound]);
}

/// Action `a` of the owner whose fields are set (object `o`); falls through to the block after
/// it, or jumps to `after`.
fn action(g: &mut Gen, calls: &Calls, a: ActionId, how: &How, o: Value, after: Block) {
    let (owner, rest, bind) = match how {
        How::Slow => {
            let f: extern "C" fn(*const ListEnv, u64, u64, *mut u64) = slow;
            let callee = g.b.ins().iconst(g.ptr, f as usize as i64);
            let def = g.iconst(a as i64);
            g.b.ins().call_indirect(calls.slow, callee, &[g.env, def, o, g.status]);
            let s = g.b.ins().load(types::I64, MemFlagsData::trusted(), g.status, 0);
            g.fail_if(s);
            return;
        }
        How::Inline { owner, rest, bind } => (owner, rest, bind),
    };
    // No binding yet (as the interpreter's environment for the owner's conditions).
    let none = g.iconst(NONE as i64);
    store(g, none, O::BOUND);
    let z = g.iconst(0);
    store(g, z, O::BOUND_BASE);
    let m1 = g.iconst(-1);
    store(g, m1, O::BOUND_GOD);
    conditions(g, owner, after);
    match bind {
        Bind::None => {
            conditions(g, rest, after);
            let none = g.iconst(NONE as i64);
            call_push(g, calls, a, o, none);
        }
        Bind::Gods(gods) => {
            for &god in gods {
                let skip = g.b.create_block();
                let gv = g.iconst(god as i64);
                store(g, gv, O::BOUND);
                conditions(g, rest, skip);
                call_push(g, calls, a, o, gv);
                g.b.ins().jump(skip, &[]);
                g.b.switch_to_block(skip);
            }
        }
        Bind::Numbers(lo, hi) => {
            let hi = *hi as i64;
            counted(
                g,
                *lo as i64,
                after,
                |g, k| g.b.ins().icmp_imm_u(IntCC::UnsignedGreaterThan, k, hi),
                |g, k, skip| {
                    store(g, k, O::BOUND);
                    conditions(g, rest, skip);
                    call_push(g, calls, a, o, k);
                },
            );
        }
        Bind::Objects(classes) => {
            let done = |g: &mut Gen, j| {
                let n = g.field(O::N_OBJECTS);
                g.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, j, n)
            };
            counted(g, 0, after, done, |g, j, skip| {
                let rec = object(g, j);
                let alive = g.b.ins().uload8(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, alive) as i32);
                let check = g.b.create_block();
                g.b.ins().brif(alive, check, &[], skip, &[]);
                g.b.switch_to_block(check);
                let class = g.b.ins().uload16(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, class) as i32);
                let live = g.b.create_block();
                for &c in classes {
                    let no = g.b.create_block();
                    let is = g.b.ins().icmp_imm_u(IntCC::Equal, class, c as i64);
                    g.b.ins().brif(is, live, &[], no, &[]);
                    g.b.switch_to_block(no);
                }
                g.b.ins().jump(skip, &[]);
                g.b.switch_to_block(live);
                let base = g.b.ins().uload32(MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, base) as i32);
                let god = g.b.ins().uload16(types::I64, MemFlagsData::trusted(), rec, std::mem::offset_of!(ObjRec, god) as i32);
                store(g, j, O::BOUND);
                store(g, base, O::BOUND_BASE);
                store(g, god, O::BOUND_GOD);
                conditions(g, rest, skip);
                call_push(g, calls, a, o, j);
            });
        }
    }
}

/// A loop over `k` = `start`, `start` + 1, … while `done(k)` (an i8) is false, leaving to
/// `after`: `body` emits one turn for `k`, and jumps to (or falls through to) the block it is
/// handed for the next. Emission goes on in an unreachable block after the loop.
fn counted(g: &mut Gen, start: i64, after: Block, done: impl Fn(&mut Gen, Value) -> Value, body: impl FnOnce(&mut Gen, Value, Block)) {
    let k: Variable = g.b.declare_var(types::I64);
    let s = g.iconst(start);
    g.b.def_var(k, s);
    let (head, turn, next) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
    g.b.ins().jump(head, &[]);
    g.b.switch_to_block(head);
    let kv = g.b.use_var(k);
    let stop = done(g, kv);
    g.b.ins().brif(stop, after, &[], turn, &[]);
    g.b.switch_to_block(turn);
    body(g, kv, next);
    g.b.ins().jump(next, &[]);
    g.b.switch_to_block(next);
    let kv = g.b.use_var(k);
    let k1 = g.b.ins().iadd_imm_s(kv, 1);
    g.b.def_var(k, k1);
    g.b.ins().jump(head, &[]);
    let dead = g.b.create_block();
    g.b.switch_to_block(dead);
}
