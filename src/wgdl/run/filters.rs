//! Move filters and policies: `choose`, `unless`, `policyOnly` and `lastResort` applied to the
//! listed moves, a policy's pick by its tiers, and the `constraint` lines. Scratch space is per
//! thread: nothing is allocated per move.

use super::occupancy::OccCache;
use crate::rng::Rng;
use crate::wgdl::program::Env;
use crate::wgdl::program::{Action, Ctx, NONE, PickCode, Program, RuntimeError, State};
use rand::RngExt;

thread_local! {
    /// Scratch space of the move filters.
    static FILTER: std::cell::RefCell<FilterScratch> = const { std::cell::RefCell::new(FilterScratch { keys: Vec::new(), keep: Vec::new(), count: Vec::new() }) };
}

/// Per-thread scratch of [`Program::filter_moves`]: choose keys, which moves stay, moves per
/// action.
struct FilterScratch {
    keys: Vec<i64>,
    keep: Vec<bool>,
    count: Vec<u32>,
}

/// An action whose moves `choose` keeps some of (without a walk order: those are generated
/// already chosen).
pub(in crate::wgdl) const FILTER_CHOOSE: u8 = 1;
/// An action with `unless`.
pub(in crate::wgdl) const FILTER_UNLESS: u8 = 2;
/// A `policyOnly` action.
pub(in crate::wgdl) const FILTER_POLICY_ONLY: u8 = 4;
/// An action with `lastResort`.
pub(in crate::wgdl) const FILTER_LAST_RESORT: u8 = 8;

/// The move filters of an action, as `FILTER_*` bits.
pub(in crate::wgdl) fn filter_flags(a: &crate::wgdl::program::ActionInfo) -> u8 {
    let mut f = 0;
    if a.choose.is_some() && a.walk_order.is_none() {
        f |= FILTER_CHOOSE;
    }
    if !a.unless.is_empty() {
        f |= FILTER_UNLESS;
    }
    if a.policy_only {
        f |= FILTER_POLICY_ONLY;
    }
    if a.last_resort.is_some() {
        f |= FILTER_LAST_RESORT;
    }
    f
}

impl Program {
    /// Applies `choose` and `unless`; for searches (not `for_policy`) also drops `policyOnly`
    /// moves and applies `lastResort`. Scratch space is per thread: nothing is allocated.
    pub(in crate::wgdl) fn filter_moves(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
    ) -> Result<(), RuntimeError> {
        FILTER.with(|f| self.filter_moves_with(st, out, for_policy, occ, &mut f.borrow_mut()))
    }

    fn filter_moves_with(
        &self,
        st: &State,
        out: &mut Vec<Action>,
        for_policy: bool,
        occ: Option<&OccCache>,
        f: &mut FilterScratch,
    ) -> Result<(), RuntimeError> {
        // Which filters the listed moves have.
        let flags = out.iter().fold(0, |acc, m| acc | self.filter_flags[m.def as usize]);
        if flags == 0 {
            return Ok(());
        }
        // choose: per (action, owner), keep the n lowest keys (first of equals). Actions with a
        // walk order were generated that way already.
        let chosen = |m: &Action| self.actions[m.def as usize].choose.filter(|_| self.filter_flags[m.def as usize] & FILTER_CHOOSE != 0);
        if flags & FILTER_CHOOSE != 0 {
            f.keys.clear();
            for m in out.iter() {
                f.keys.push(match chosen(m) {
                    Some((_, e)) => self.eval_env(&Env::with_occ(self, st, Ctx { this: m.this, bound: m.bound }, occ), e)?,
                    None => 0,
                });
            }
            f.keep.clear();
            for (i, m) in out.iter().enumerate() {
                let Some((n, _)) = chosen(m) else {
                    f.keep.push(true);
                    continue;
                };
                let better =
                    out.iter().enumerate().filter(|(j, o)| o.def == m.def && o.this == m.this && (f.keys[*j], *j) < (f.keys[i], i)).count();
                f.keep.push(better < n as usize);
            }
            let mut k = 0;
            out.retain(|_| {
                k += 1;
                f.keep[k - 1]
            });
        }
        // Moves per action, for `unless` and `lastResort`.
        f.count.clear();
        f.count.resize(self.actions.len(), 0);
        for m in out.iter() {
            f.count[m.def as usize] += 1;
        }
        // unless: drop an action's moves while a move of another named action is legal.
        let blocked = |d: u16, count: &[u32]| self.actions[d as usize].unless.iter().any(|&o| count[o as usize] > 0);
        if flags & FILTER_UNLESS != 0 && out.iter().any(|m| blocked(m.def, &f.count)) {
            // Decided on the list before any is dropped.
            f.keep.clear();
            f.keep.extend(out.iter().map(|m| !blocked(m.def, &f.count)));
            let mut k = 0;
            out.retain(|_| {
                k += 1;
                f.keep[k - 1]
            });
            f.count.iter_mut().for_each(|c| *c = 0);
            for m in out.iter() {
                f.count[m.def as usize] += 1;
            }
        }
        if !for_policy {
            if flags & FILTER_POLICY_ONLY != 0 {
                out.retain(|m| self.filter_flags[m.def as usize] & FILTER_POLICY_ONLY == 0);
            }
            if flags & FILTER_LAST_RESORT != 0 && out.iter().any(|m| self.filter_flags[m.def as usize] & FILTER_LAST_RESORT != 0) {
                // Counted after `policyOnly` moves are gone.
                f.count.iter_mut().for_each(|c| *c = 0);
                for m in out.iter() {
                    f.count[m.def as usize] += 1;
                }
                let total = out.len() as u32;
                let count = &f.count;
                out.retain(|m| match self.actions[m.def as usize].last_resort {
                    Some(n) => total - count[m.def as usize] <= n,
                    None => true,
                });
            }
        }
        Ok(())
    }

    /// The move a policy picks here, or `None` when none of its tiers has a move. `buf` is
    /// scratch space.
    pub fn policy_move(&self, st: &State, policy: usize, rng: &mut Rng, buf: &mut Vec<Action>) -> Result<Option<Action>, RuntimeError> {
        self.with_occ(st, |occ| {
            self.candidate_actions_inner(st, buf, true, occ)?;
            self.filter_moves(st, buf, true, occ)
        })?;
        let pol = &self.policies[policy];
        for tier in &pol.tiers {
            let mut chosen: Option<Action> = None;
            let mut count = 0usize;
            let mut total = 0.0f64;
            let mut best = f64::NEG_INFINITY;
            for &m in buf.iter() {
                if m.def != tier.action {
                    continue;
                }
                let ctx = Ctx { this: m.this, bound: m.bound };
                if let Some(c) = tier.cond
                    && self.eval(st, c, ctx)? == 0
                {
                    continue;
                }
                let num = |e, double: bool| -> Result<f64, RuntimeError> {
                    let v = self.eval(st, e, ctx)?;
                    Ok(if double { f64::from_bits(v as u64) } else { v as f64 })
                };
                match tier.pick {
                    PickCode::First => {
                        chosen = Some(m);
                        break;
                    }
                    PickCode::Random => {
                        // Reservoir sampling: uniform over the tier's moves in one pass.
                        count += 1;
                        if rng.random_range(0..count) == 0 {
                            chosen = Some(m);
                        }
                    }
                    PickCode::Weight(e, double) => {
                        let w = num(e, double)?.max(0.0);
                        count += 1;
                        if w > 0.0 {
                            total += w;
                            if rng.random::<f64>() * total < w {
                                chosen = Some(m);
                            }
                        } else if total == 0.0 && chosen.is_none() {
                            chosen = Some(m);
                        }
                    }
                    PickCode::Max(e, double) => {
                        let v = num(e, double)?;
                        if v > best {
                            best = v;
                            chosen = Some(m);
                        }
                    }
                }
            }
            if chosen.is_some() {
                return Ok(chosen);
            }
        }
        Ok(None)
    }

    /// The `constraint` lines that do not hold in `st` (normally the start state), as text.
    pub fn violated_constraints(&self, st: &State) -> Result<Vec<String>, RuntimeError> {
        let mut out = Vec::new();
        for (e, text) in &self.constraints {
            if self.eval(st, *e, Ctx { this: NONE, bound: NONE })? == 0 {
                out.push(text.clone());
            }
        }
        Ok(out)
    }

    /// The policy's index by name.
    pub fn policy_index(&self, name: &str) -> Option<usize> {
        self.policies.iter().position(|p| p.name == name)
    }
}
