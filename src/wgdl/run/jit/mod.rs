//! The compiled tier (cargo feature `compiled`): a program's expressions generated as machine
//! code by Cranelift when they are first evaluated, over the interpreter's own [`State`], and
//! called through the same [`Fx`] slot as their closures — so that everything that evaluates an
//! expression (move listing, consequences, outcomes, policies) runs the generated code without
//! knowing it. The interpreter stays the reference and the fallback: an expression whose root the
//! generator does not emit keeps its closure, an operand it does not emit is handed back to its
//! closure ([`call_closure`]), and a generated function that meets anything but the plain path —
//! a slot index out of range, an overflow, a division by zero, a cell off its grid, an error in a
//! handed-back operand — returns a status instead of a value, and the expression is evaluated
//! again through its closure, which reports the error with its span. `tests/closures.rs` and
//! `tests/tiers.rs` hold the tier to the bytecode and to the interpreted tier.
//!
//! The same machinery generates, per program, a **move lister** (`list.rs`: the object loop,
//! class gates, each action's conditions inline, its bindings looped in the interpreter's order)
//! and, per rule, its conditions' conjunction (checked by `Program::rule_holds`).
//!
//! **Invariants.** This file and `list.rs` hold the tier's only `unsafe`: calling generated
//! code, and generated code calling back ([`call_closure`]; the lister's `push` and `slow`). It rests on four facts, each kept by the code named:
//! 1. *Generated code reads memory only through the [`JitEnv`] (or the lister's `ListEnv`) it is
//!    handed, and checks every index it reads against a length read from there first*
//!    ([`emit`]: `slot` against [`JitEnv::len`], the one helper that loads a slot; `live_record`
//!    an object reference against the object count; `constant` a description against the
//!    constant table's count and the index against that description's; the lister's loops
//!    stop at the object count). Loads from the `JitEnv` itself use the `#[repr(C)]` offsets
//!    of `Offsets` (`abi.rs`, with the structs), checked against the struct at compile time, and records are read at
//!    `offset_of!` their fields. It writes only the status word it is handed (the lister keeps
//!    its owner and binding in variables), and passes the env, a leaked closure's address and
//!    the status word on to the callbacks, which run closures on an `Env` of the same state.
//! 2. *A `JitEnv` is made from live borrows* ([`JitEnv::of`], `Lister::run`: the state's slots
//!    and object records with their lengths, the program's constant table, the environment's
//!    numbers, the `Env` or the lister's callbacks) *and lives on the caller's stack for the
//!    call*; nothing else touches what the callbacks borrow while generated code runs.
//! 3. *Generated code, and the closures it calls back, are never freed*: the one [`JITModule`]
//!    lives in a process-wide mutex and leaks its code memory when dropped (Cranelift's
//!    documented behaviour), and `emit` leaks the closures whose addresses it embeds, so a
//!    function pointer, once finalized, is valid for the rest of the process.
//! 4. *The signatures called are the signatures generated*: the function's from [`signature`]
//!    and [`RawFn`], next to each other in `abi.rs`, for every generated function ([`define`]; the
//!    lister's `RawList` is the same signature with its own env);
//!    the callbacks' from `emit::Gen::callback` and `list::function`, next
//!    to the `extern "C"` declarations they call.

mod abi;
mod emit;
mod list;

pub(in crate::wgdl) use abi::{ConstTable, Lister, Native};
pub(in crate::wgdl) use list::lister;

use super::fast::T;
use crate::wgdl::program::{Env, Fx, NONE, NULL, Program, State};
use abi::{JitEnv, RawFn, signature};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::Module;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex};

impl JitEnv {
    #[inline(always)]
    fn of(e: &Env) -> JitEnv {
        let st: &State = e.st;
        let consts = e.p.fast.consts(e.p);
        JitEnv {
            slots: st.slots.as_ptr(),
            len: st.slots.len() as u64,
            this_base: e.this_base() as i64,
            bound_base: e.bound_base() as i64,
            this: e.this as i64,
            bound: e.bound as i64,
            clock: st.clock,
            sessions: st.sessions,
            moves: st.moves as i64,
            actor: if st.actor == NONE { NULL } else { st.actor as i64 },
            round: st.round as i64,
            turns: st.turns as i64,
            to_move: st.to_move as i64,
            env: e as *const Env as *const std::ffi::c_void,
            consts: consts.flat.as_ptr(),
            consts_len: consts.flat.len() as u64,
            consts_at: consts.at.as_ptr(),
            n_gods: consts.at.len() as u64,
            this_god: e.this_god() as i64,
            bound_god: st.objects.get(e.bound as usize).map_or(-1, |o| o.god as i64),
            objects: st.objects.as_ptr(),
            n_objects: st.objects.len() as u64,
        }
    }
}

impl ConstTable {
    pub(in crate::wgdl) fn of(p: &Program) -> ConstTable {
        let mut t = ConstTable::default();
        for g in &p.gods {
            t.at.push([t.flat.len() as u64, g.consts.len() as u64]);
            t.flat.extend_from_slice(&g.consts);
        }
        t
    }
}

/// What generated code calls for a part of an expression it does not generate: that part's
/// closure, evaluated on the caller's [`Env`]; an error (or a panic) sets the status word, and
/// the whole expression is evaluated again through its own closure, which reports it.
pub(super) extern "C" fn call_closure(jenv: *const JitEnv, fx: *const Fx, status: *mut u64) -> i64 {
    // SAFETY: generated code passes the `JitEnv` it was handed (alive for the call, invariant
    // 2), whose `env` points to the `Env` that made it; `fx` to a closure leaked by `emit`
    // (never freed, as the code that holds its address); `status` to the caller's status word.
    let (env, fx, status) = unsafe { (&*((*jenv).env as *const Env), &*fx, &mut *status) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fx(env))) {
        Ok(Ok(v)) => v,
        _ => {
            *status = 1;
            0
        }
    }
}

impl Native {
    /// The expression's value, or `None` where the generated code gave up.
    #[inline(always)]
    pub(in crate::wgdl) fn call(&self, e: &Env) -> Option<i64> {
        let env = JitEnv::of(e);
        let mut status = 0u64;
        // SAFETY: `f` was generated by `compile` with `signature` (invariant 4) and is never
        // freed (invariant 3); it reads only `env`, which lives through the call, and slots
        // below `env.len` of the state `e` borrows (invariants 1 and 2); it writes only `status`.
        let v = unsafe { (self.f)(&env, &mut status) };
        (status == 0).then_some(v)
    }
}

/// The process's one code generator (invariant 3); `None` where the host has no Cranelift
/// backend, and then every expression keeps its closure.
static JIT: LazyLock<Mutex<Option<JITModule>>> = LazyLock::new(|| Mutex::new(new_module()));

fn new_module() -> Option<JITModule> {
    let mut flags = settings::builder();
    flags.set("use_colocated_libcalls", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    flags.set("opt_level", "speed").ok()?;
    let isa = cranelift_native::builder().ok()?.finish(settings::Flags::new(flags)).ok()?;
    Some(JITModule::new(JITBuilder::with_isa(isa, cranelift_module::default_libcall_names())))
}

/// Trees smaller than this keep their closure: a closure specialised for a small shape (`this.x
/// < 5`) costs one call, as generated code does, without making the `JitEnv`.
static MIN_NODES: AtomicUsize = AtomicUsize::new(4);

/// Sets the smallest tree generated (tests set 1, to hold every covered expression to the
/// bytecode). Affects expressions built after the call.
pub fn set_min_nodes(n: usize) {
    MIN_NODES.store(n, Ordering::Relaxed);
}

/// Generates expression tree `t` of program `p`, if the generator emits its root and it is
/// large enough to pay (rules' conditions: their conjunction, [`crate::wgdl::fast`]).
pub(in crate::wgdl) fn compile(p: &Program, t: &T) -> Option<Native> {
    SEEN.fetch_add(1, Ordering::Relaxed);
    if !emit::native(p, t) || emit::native_size(p, t) < MIN_NODES.load(Ordering::Relaxed) {
        return None;
    }
    let code = define(|func, config| emit::function(p, t, func, config))?;
    // SAFETY: `code` is the entry of a function just generated with `signature` (invariant 4).
    let f = unsafe { std::mem::transmute::<*const u8, RawFn>(code) };
    Some(Native { f })
}

/// Generates one function with [`signature`], its body filled by `fill`, in the process's one
/// module; returns its entry (`None` where the host has no code generator or Cranelift refuses
/// the function).
fn define(fill: impl FnOnce(&mut cranelift_codegen::ir::Function, cranelift_codegen::isa::TargetFrontendConfig)) -> Option<*const u8> {
    let mut guard = JIT.lock().unwrap_or_else(|e| e.into_inner());
    let module = guard.as_mut()?;
    let mut ctx = module.make_context();
    ctx.func.signature = signature(module);
    fill(&mut ctx.func, module.target_config());
    let id = module.declare_anonymous_function(&ctx.func.signature).ok()?;
    module.define_function(id, &mut ctx).ok()?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    GENERATED.fetch_add(1, Ordering::Relaxed);
    Some(module.get_finalized_function(id))
}

static SEEN: AtomicUsize = AtomicUsize::new(0);
static GENERATED: AtomicUsize = AtomicUsize::new(0);

/// How many expressions this process has built for the compiled tier, and how many of them it
/// generated as machine code (for tests and the run summary).
pub fn generated() -> (usize, usize) {
    (SEEN.load(Ordering::Relaxed), GENERATED.load(Ordering::Relaxed))
}
