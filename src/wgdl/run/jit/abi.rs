//! The shapes generated code and the Rust that calls it agree on, and the compiled tier's
//! products a program caches: [`JitEnv`] (what an expression's code reads) with its field
//! [`Offsets`], the lister's [`ListEnv`], the signatures [`RawFn`] (with [`signature`], the one
//! it is generated with) and [`RawList`], and the records [`Native`] (an expression's code),
//! [`Lister`] (the move lister) and [`ConstTable`] (the class constants it reads). Data only:
//! the code that makes and calls them, and the tier's `unsafe`, is in `mod.rs` and `list.rs`
//! (invariants 1 and 4 there); kept apart so that [`crate::wgdl::program::FastCode`] can hold
//! the products without naming the generator, which names the program.

use crate::wgdl::program::ObjRec;
use cranelift_codegen::ir::{AbiParam, Signature, types};
use cranelift_jit::JITModule;
use cranelift_module::Module;

/// What generated code reads: the state's slots and the environment's numbers.
#[repr(C)]
pub(in crate::wgdl) struct JitEnv {
    pub(super) slots: *const i64,
    pub(super) len: u64,
    pub(super) this_base: i64,
    pub(super) bound_base: i64,
    pub(super) this: i64,
    pub(super) bound: i64,
    pub(super) clock: i64,
    pub(super) sessions: i64,
    pub(super) moves: i64,
    pub(super) actor: i64,
    pub(super) round: i64,
    pub(super) turns: i64,
    pub(super) to_move: i64,
    /// The [`Env`] itself, for the parts generated code hands back to a closure (null in the
    /// move lister, whose callback makes an `Env` of its own).
    pub(super) env: *const std::ffi::c_void,
    /// The program's class constants ([`ConstTable`]).
    pub(super) consts: *const i64,
    pub(super) consts_len: u64,
    pub(super) consts_at: *const [u64; 2],
    pub(super) n_gods: u64,
    /// The description of `this` and of the bound object (the lister's, for class constants).
    pub(super) this_god: i64,
    pub(super) bound_god: i64,
    /// The state's object records.
    pub(super) objects: *const ObjRec,
    pub(super) n_objects: u64,
}

/// Byte offsets of [`JitEnv`]'s fields, in declaration order (all 8 bytes wide, `#[repr(C)]`).
pub(super) struct Offsets;
impl Offsets {
    pub const SLOTS: i32 = 0;
    pub const LEN: i32 = 8;
    pub const THIS_BASE: i32 = 16;
    pub const BOUND_BASE: i32 = 24;
    pub const THIS: i32 = 32;
    pub const BOUND: i32 = 40;
    pub const CLOCK: i32 = 48;
    pub const SESSIONS: i32 = 56;
    pub const MOVES: i32 = 64;
    pub const ACTOR: i32 = 72;
    pub const ROUND: i32 = 80;
    pub const TURNS: i32 = 88;
    pub const TO_MOVE: i32 = 96;
    pub const ENV: i32 = 104;
    pub const CONSTS: i32 = 112;
    pub const CONSTS_LEN: i32 = 120;
    pub const CONSTS_AT: i32 = 128;
    pub const N_GODS: i32 = 136;
    pub const THIS_GOD: i32 = 144;
    pub const BOUND_GOD: i32 = 152;
    pub const OBJECTS: i32 = 160;
    pub const N_OBJECTS: i32 = 168;
}
const _: () = assert!(std::mem::size_of::<JitEnv>() == 176);
const _: () = assert!(std::mem::offset_of!(JitEnv, n_objects) == Offsets::N_OBJECTS as usize);
const _: () = assert!(std::mem::offset_of!(JitEnv, env) == Offsets::ENV as usize);
const _: () = assert!(std::mem::offset_of!(JitEnv, bound_god) == Offsets::BOUND_GOD as usize);

/// Every description's class constants in one array, with each description's (start, count):
/// what the generated lister reads class constants from. Built from a program's descriptions
/// when first needed and forgotten when its parameters change (`FastCode::forget_plans`).
#[derive(Clone, Debug, Default)]
pub(in crate::wgdl) struct ConstTable {
    pub(super) flat: Vec<i64>,
    pub(super) at: Vec<[u64; 2]>,
}

/// The generated function: `(env, status) -> value`; `*status` is set non-zero when the
/// function gave up (the caller then evaluates the closure).
pub(super) type RawFn = unsafe extern "C" fn(*const JitEnv, *mut u64) -> i64;

pub(super) fn signature(m: &JITModule) -> Signature {
    let ptr = m.target_config().pointer_type();
    let mut sig = m.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(types::I64));
    sig
}

/// An expression as machine code.
#[derive(Clone, Copy)]
pub(in crate::wgdl) struct Native {
    pub(super) f: RawFn,
}

/// What the lister reads: the expressions' [`JitEnv`] (read once at entry; the owner and the
/// binding then live in variables), and the caller's callbacks (`list.rs`).
#[repr(C)]
pub(super) struct ListEnv {
    pub(super) jit: JitEnv,
    /// 1 when `policyOnly` actions are left out.
    pub(super) skip_hidden: u64,
    pub(super) cb: *mut std::ffi::c_void,
}

/// Byte offsets of [`ListEnv`]'s own fields (after its `JitEnv`).
pub(super) struct L;
impl L {
    pub const SKIP_HIDDEN: i32 = 176;
}
const _: () = assert!(std::mem::offset_of!(ListEnv, skip_hidden) == L::SKIP_HIDDEN as usize);

/// The lister's signature: `(env, status) -> 0`.
pub(super) type RawList = unsafe extern "C" fn(*mut ListEnv, *mut u64) -> i64;

/// A program's generated move lister.
#[derive(Clone, Copy)]
pub(in crate::wgdl) struct Lister {
    pub(super) f: RawList,
    /// How many actions it inlines, of how many player actions (for tests and the bench).
    pub inlined: usize,
    pub actions: usize,
}
