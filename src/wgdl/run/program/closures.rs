//! What a program's expressions and consequences run as, and where it keeps them: the
//! environment an evaluation reads ([`Env`]: the program, the state, whose action), a
//! consequence's [`Frame`], the closures ([`Fx`], [`Cx`], shared through [`Shared`]), the
//! [`Tier`] that builds them, and [`FastCode`], the program's cache of them (with the compiled
//! tier's products), filled on first use.
//!
//! These are here, beside [`Program`], because each holds the other: a program holds its
//! closures and a closure reads the program. The code that builds them (bytecode → trees →
//! closures) is `run/fast/`, which names this room and is named by nothing here; the compiled
//! tier's records are `run/jit/abi.rs`, and `run/tier.rs` (above both) picks between them.

use super::*;
use crate::wgdl::run::occupancy::OccCache;
use std::sync::{Arc, OnceLock};

/// What an evaluation reads besides the state: the program, and whose action is running, with
/// the slot bases of `this` and of the bound object looked up once. (The closures of
/// `run/fast/` read the bases directly, hence their visibility; they are set only here.)
pub(in crate::wgdl) struct Env<'a> {
    pub p: &'a Program,
    pub st: &'a State,
    pub this: u32,
    pub bound: u32,
    pub(in crate::wgdl) this_base: u32,
    pub(in crate::wgdl) bound_base: u32,
    /// The god of `this` (0 when there is none): its class constants.
    pub(in crate::wgdl) this_god: u32,
    /// The occupants, listed once, during move generation (`None`: hex built-ins scan).
    pub occ: Option<&'a OccCache>,
}

impl<'a> Env<'a> {
    /// The first slot of `this` / of the bound object (0 when there is none).
    #[inline]
    pub(in crate::wgdl) fn this_base(&self) -> u32 {
        self.this_base
    }
    #[inline]
    pub(in crate::wgdl) fn bound_base(&self) -> u32 {
        self.bound_base
    }
    /// The god of `this` (0 when there is none).
    #[inline]
    pub(in crate::wgdl) fn this_god(&self) -> u32 {
        self.this_god
    }

    #[inline]
    pub(in crate::wgdl) fn new(p: &'a Program, st: &'a State, ctx: Ctx) -> Env<'a> {
        Env::with_occ(p, st, ctx, None)
    }

    /// The environment of a consequence: the bases already looked up in `f`.
    #[inline(always)]
    pub(in crate::wgdl) fn of_frame(p: &'a Program, st: &'a State, f: &Frame) -> Env<'a> {
        Env {
            p,
            st,
            this: f.ctx.this,
            bound: f.ctx.bound,
            this_base: f.this_base,
            bound_base: f.bound_base,
            this_god: f.this_god,
            occ: None,
        }
    }

    /// The same environment for another binding (`bound_base`: its object's first slot, or 0).
    #[inline(always)]
    pub(in crate::wgdl) fn rebind(&mut self, bound: u32, bound_base: u32) {
        self.bound = bound;
        self.bound_base = bound_base;
    }

    /// The same environment for another owner, object `this` (its record: first slot and god).
    #[inline(always)]
    pub(in crate::wgdl) fn rebind_this(&mut self, this: u32, rec: ObjRec) {
        self.this = this;
        self.this_base = rec.base;
        self.this_god = rec.god as u32;
    }

    /// For a binding that is not an object (a number, a cell, a description): no bound base.
    #[inline]
    pub(in crate::wgdl) fn unbound_object(p: &'a Program, st: &'a State, ctx: Ctx, occ: Option<&'a OccCache>) -> Env<'a> {
        let (this_base, this_god) = this_of(st, ctx.this);
        Env { p, st, this: ctx.this, bound: ctx.bound, this_base, bound_base: 0, this_god, occ }
    }

    #[inline]
    pub(in crate::wgdl) fn with_occ(p: &'a Program, st: &'a State, ctx: Ctx, occ: Option<&'a OccCache>) -> Env<'a> {
        let f = Frame::new(st, ctx);
        Env { occ, ..Env::of_frame(p, st, &f) }
    }
}

/// The first slot and the god of object `this` ((0, 0) when there is no such object).
#[inline(always)]
pub(in crate::wgdl) fn this_of(st: &State, this: u32) -> (u32, u32) {
    st.objects.get(this as usize).map_or((0, 0), |o| (o.base, o.god as u32))
}

/// Whose consequences are running, with the slot bases of `this` and of the bound object looked
/// up once per action (objects are only ever appended, so a base never moves; a deleted object
/// keeps its record).
#[derive(Clone, Copy)]
pub(in crate::wgdl) struct Frame {
    pub ctx: Ctx,
    pub(in crate::wgdl) this_base: u32,
    pub(in crate::wgdl) bound_base: u32,
    pub(in crate::wgdl) this_god: u32,
}

impl Frame {
    #[inline]
    pub(in crate::wgdl) fn new(st: &State, ctx: Ctx) -> Frame {
        let (this_base, this_god) = this_of(st, ctx.this);
        let bound_base = st.objects.get(ctx.bound as usize).map_or(0, |o| o.base);
        Frame { ctx, this_base, bound_base, this_god }
    }
}

/// A closure shared by the programs that hold it (a [`Program`] clone keeps its closures), called
/// through a reference made once when it is built. Calling through an `Arc<dyn Fn>` finds the
/// closure's data at an offset that depends on its alignment, read from the vtable on every
/// call (3 % of the arena's instructions); this keeps the `Arc`, for sharing, and the
/// reference it derefs to, for calling.
pub(in crate::wgdl) struct Shared<F: ?Sized> {
    keep: Arc<F>,
    /// `&*keep`, made by [`Shared::new`] (the only constructor).
    at: std::ptr::NonNull<F>,
}

impl<F: ?Sized> Shared<F> {
    #[inline]
    pub(in crate::wgdl) fn new(keep: Arc<F>) -> Shared<F> {
        let at = std::ptr::NonNull::from(&*keep);
        Shared { keep, at }
    }
}

impl<F: ?Sized> Clone for Shared<F> {
    fn clone(&self) -> Shared<F> {
        Shared { keep: self.keep.clone(), at: self.at }
    }
}

impl<F: ?Sized> std::ops::Deref for Shared<F> {
    type Target = F;
    #[inline(always)]
    fn deref(&self) -> &F {
        // SAFETY: `at` was made from `&*keep`, and `keep` — owned by `self`, never mutated
        // through, its contents never moved (an `Arc`'s allocation stays where it is) — lives
        // as long as `self` does.
        unsafe { self.at.as_ref() }
    }
}

// SAFETY: a `Shared<F>` gives no access to `F` but `&F` (as `Arc<F>` does), so it may cross
// threads exactly when `Arc<F>` may: when `F` is `Send + Sync`.
unsafe impl<F: ?Sized + Send + Sync> Send for Shared<F> {}
// SAFETY: as above.
unsafe impl<F: ?Sized + Send + Sync> Sync for Shared<F> {}

/// What a compiled expression does.
pub(in crate::wgdl) type FxFn = dyn Fn(&Env) -> Result<i64, RuntimeError> + Send + Sync;
/// A compiled expression.
pub(in crate::wgdl) type Fx = Shared<FxFn>;

/// Closure `f` as a compiled expression.
#[inline]
pub(in crate::wgdl) fn fx_of(f: impl Fn(&Env) -> Result<i64, RuntimeError> + Send + Sync + 'static) -> Fx {
    Shared::new(Arc::new(f) as Arc<FxFn>)
}

/// Which tier evaluates a program's expressions: the closures, or machine code generated where
/// the compiled tier covers an expression (cargo feature `compiled`, `wgdl::run::jit`; without
/// it, `Compiled` runs the closures).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tier {
    #[default]
    Interpreted,
    Compiled,
}

impl Tier {
    /// Whether this build can generate code (`Compiled` is only a request without it).
    pub const AVAILABLE: bool = cfg!(feature = "compiled");

    /// The tier programs compiled from now on start with: the last [`Tier::set_default`], else
    /// the environment's `PLAYFORGE_TIER` (`interp` or `compiled`), else `Interpreted`.
    pub fn default_for_new() -> Tier {
        match DEFAULT_TIER.load(std::sync::atomic::Ordering::Relaxed) {
            1 => Tier::Interpreted,
            2 => Tier::Compiled,
            _ => {
                let t = match std::env::var("PLAYFORGE_TIER").as_deref() {
                    Ok("compiled") => Tier::Compiled,
                    _ => Tier::Interpreted,
                };
                Tier::set_default(t);
                t
            }
        }
    }

    /// Sets the tier of programs compiled from now on (the command line's `--tier`).
    pub fn set_default(t: Tier) {
        DEFAULT_TIER.store(if t == Tier::Compiled { 2 } else { 1 }, std::sync::atomic::Ordering::Relaxed);
    }
}

/// [`Tier::default_for_new`]: 0 not yet decided, 1 interpreted, 2 compiled.
static DEFAULT_TIER: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The lazily built closures of a program, one slot per code index (only expression starts are
/// ever filled). Its slots are filled by `run/fast/` and `run/tier.rs`, hence their visibility.
#[derive(Default)]
pub struct FastCode {
    /// The tier its expressions are built for.
    pub(in crate::wgdl) tier: Tier,
    pub(in crate::wgdl) slots: Vec<OnceLock<Fx>>,
    /// One per consequence ([`Program::conses`]).
    pub(in crate::wgdl) conses: Vec<OnceLock<Cx>>,
    /// One per action: its conditions' closures, in order (fetched once per move generation
    /// and owner instead of once per evaluation).
    pub(in crate::wgdl) conds: Vec<OnceLock<Box<[Fx]>>>,
    /// One per action: its consequences' closures, in attachment order.
    pub(in crate::wgdl) effects: Vec<OnceLock<Box<[Cx]>>>,
    /// One per action whose consequences include a conditional that reads only class constants
    /// of `this` and literals (`None` for the others): per god of `this`, the consequences with
    /// those conditionals decided ([`Program::with_parameters`] starts them afresh).
    pub(in crate::wgdl) plans: Vec<OnceLock<Option<Box<[OnceLock<Box<[Cx]>>]>>>>,
    /// Per code index, for the expressions that only ever run with `this` (`LIVE_THIS`) or
    /// the bound object (`LIVE_BOUND`) a live object ([`Program::live_flags`]).
    pub(in crate::wgdl) live: OnceLock<Box<[u8]>>,
    /// Per consequence, the same for `this` and the bound object while it runs
    /// ([`Program::live_cons_flags`]).
    pub(in crate::wgdl) live_conses: OnceLock<Box<[u8]>>,
    /// The compiled tier's move lister (`None`: none generated, the interpreter lists).
    #[cfg(feature = "compiled")]
    pub(in crate::wgdl) lister: OnceLock<Option<crate::wgdl::run::jit::Lister>>,
    /// The class constants as the lister reads them (forgotten with the plans).
    #[cfg(feature = "compiled")]
    pub(in crate::wgdl) consts: OnceLock<crate::wgdl::run::jit::ConstTable>,
    /// Per action, a rule's conditions generated as one function ([`FastCode::rule_check`]).
    #[cfg(feature = "compiled")]
    pub(in crate::wgdl) rule_checks: OnceLock<Box<[Option<crate::wgdl::run::jit::Native>]>>,
}

/// [`FastCode::live`]: `this` is a live object whenever the expression runs.
pub(in crate::wgdl) const LIVE_THIS: u8 = 1;
/// [`FastCode::live`]: the bound object is a live object whenever the expression runs.
pub(in crate::wgdl) const LIVE_BOUND: u8 = 2;

/// A compiled consequence: runs it on the state (`depth` counts nested `create:` hooks).
pub(in crate::wgdl) type Cx = Shared<CxFn>;
/// What a compiled consequence does.
pub(in crate::wgdl) type CxFn = dyn Fn(&Program, &mut State, &Frame, u32) -> Result<(), RuntimeError> + Send + Sync;

/// Closure `f` as a compiled consequence.
#[inline]
pub(in crate::wgdl) fn cx_of(f: impl Fn(&Program, &mut State, &Frame, u32) -> Result<(), RuntimeError> + Send + Sync + 'static) -> Cx {
    Shared::new(Arc::new(f) as Arc<CxFn>)
}

impl Clone for FastCode {
    fn clone(&self) -> FastCode {
        FastCode {
            tier: self.tier,
            slots: self.slots.clone(),
            conses: self.conses.clone(),
            conds: self.conds.clone(),
            effects: self.effects.clone(),
            plans: self.plans.clone(),
            live: self.live.clone(),
            live_conses: self.live_conses.clone(),
            #[cfg(feature = "compiled")]
            lister: self.lister.clone(),
            #[cfg(feature = "compiled")]
            consts: self.consts.clone(),
            #[cfg(feature = "compiled")]
            rule_checks: self.rule_checks.clone(),
        }
    }
}

impl std::fmt::Debug for FastCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let built = self.slots.iter().filter(|s| s.get().is_some()).count();
        write!(f, "FastCode {{ {built} of {} built }}", self.slots.len())
    }
}

impl FastCode {
    /// Room for code indices `0..n` (keeps closures already built below `n`).
    pub fn resize(&mut self, n: usize) {
        self.slots.resize_with(n, OnceLock::new);
    }
    /// Room for consequences `0..n`.
    pub fn resize_conses(&mut self, n: usize) {
        self.conses.resize_with(n, OnceLock::new);
    }
    /// Room for actions `0..n`.
    pub fn resize_actions(&mut self, n: usize) {
        self.conds.resize_with(n, OnceLock::new);
        self.effects.resize_with(n, OnceLock::new);
        self.plans.resize_with(n, OnceLock::new);
    }
    /// Room for the same code, consequences and actions, built afresh for `tier`.
    pub fn for_tier(&self, tier: Tier) -> FastCode {
        let mut f = FastCode { tier, ..FastCode::default() };
        f.resize(self.slots.len());
        f.resize_conses(self.conses.len());
        f.resize_actions(self.conds.len());
        f
    }
    /// The tier its expressions are built for.
    pub fn tier(&self) -> Tier {
        self.tier
    }
    /// Forgets the consequence plans decided on class constants (after the constants changed).
    pub fn forget_plans(&mut self) {
        self.plans.iter_mut().for_each(|p| *p = OnceLock::new());
        #[cfg(feature = "compiled")]
        {
            self.consts = OnceLock::new();
        }
    }
}
