//! Which tier builds a program's expressions ([`Tier`]): the closures of `run/fast/`, or, on
//! the compiled tier (cargo feature `compiled`), machine code from `run/jit/` with the closure
//! as its fallback; and the compiled tier's other products a program caches (its move lister,
//! its constant table, its rules' conditions), built on first use. Above both `fast` and `jit`,
//! so that neither names the other's caller: `jit` lowers through `fast`, and only this file
//! hands an expression to `jit`.

use crate::wgdl::Tier;
use crate::wgdl::fast::lower;
#[cfg(feature = "compiled")]
use crate::wgdl::program::{ActionId, ActionKind, FastCode, fx_of};
use crate::wgdl::program::{ExprId, Fx, Program};
#[cfg(feature = "compiled")]
use crate::wgdl::run::jit;

impl Program {
    /// The closure of expression `e`, built for the program's tier (the first time `e` is
    /// evaluated: `run/fast/mod.rs` caches it).
    pub(in crate::wgdl) fn lower_expr(&self, e: ExprId) -> Fx {
        let t = self.live_tree(e);
        #[cfg(feature = "compiled")]
        if self.fast.tier == Tier::Compiled
            && let Some(native) = jit::compile(self, &t)
        {
            // Generated code, and the closure for where it gives up (errors, with their span).
            let slow = lower(t);
            return fx_of(move |env| match native.call(env) {
                Some(v) => Ok(v),
                None => slow(env),
            });
        }
        lower(t)
    }

    /// On the compiled tier, the generated move lister's coverage: (actions it inlines, player
    /// actions owned by some class); `None` where no lister was generated (the interpreted tier,
    /// a build without the feature, or a program with no action the lister inlines).
    pub fn compiled_lister(&self) -> Option<(usize, usize)> {
        #[cfg(feature = "compiled")]
        {
            self.fast.lister(self).map(|(l, _)| (l.inlined, l.actions))
        }
        #[cfg(not(feature = "compiled"))]
        None
    }

    /// The same program with its expressions built for `tier` (afresh: nothing built so far is
    /// kept).
    pub fn with_tier(&self, tier: Tier) -> Program {
        let mut p = self.clone();
        p.fast = self.fast.for_tier(tier);
        p
    }
}

#[cfg(feature = "compiled")]
impl FastCode {
    /// The program's generated move lister and its constant table, on the compiled tier
    /// (generated when first asked for; `None` on the interpreted tier or where the program has
    /// no action the lister inlines).
    #[inline]
    pub(in crate::wgdl) fn lister(&self, p: &Program) -> Option<(&jit::Lister, &jit::ConstTable)> {
        if self.tier != Tier::Compiled {
            return None;
        }
        let l = self.lister.get_or_init(|| jit::lister(p)).as_ref()?;
        Some((l, self.consts(p)))
    }

    /// Program `p`'s class constants as generated code reads them.
    #[inline]
    pub(in crate::wgdl) fn consts(&self, p: &Program) -> &jit::ConstTable {
        self.consts.get_or_init(|| jit::ConstTable::of(p))
    }

    /// On the compiled tier, rule `r`'s conditions as one generated function (their
    /// conjunction; `None`: the interpreter checks them).
    #[inline]
    pub(in crate::wgdl) fn rule_check(&self, p: &Program, r: ActionId) -> Option<&jit::Native> {
        if self.tier != Tier::Compiled {
            return None;
        }
        let all = self.rule_checks.get_or_init(|| {
            (0..p.actions.len())
                .map(|a| {
                    let info = &p.actions[a];
                    if info.kind != ActionKind::Rule || info.conditions.is_empty() {
                        return None;
                    }
                    let mut conds = info.conditions.iter().map(|&e| p.live_tree(e));
                    let first = conds.next()?;
                    let t = conds.fold(first, |acc, c| crate::wgdl::fast::T::And(Box::new(acc), Box::new(c)));
                    jit::compile(p, &t)
                })
                .collect()
        });
        all.get(r as usize)?.as_ref()
    }
}
