//! Aggregates over the live objects of a class (`sumOf`, `countOf`): computed in full, or, when
//! compared with zero, stopped at the first object that decides the comparison.

use crate::wgdl::program::{Ctx, NONE, Program, RuntimeError, State};

/// An aggregate compared with zero: `== 0`, `!= 0`, `> 0` (or `>= 1`), `<= 0` (or `< 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::wgdl) enum ZeroTest {
    Zero,
    NonZero,
    Positive,
    NotPositive,
}

impl Program {
    /// Aggregate `a` compared with zero (`test`): a `countOf` whose condition cannot fail stops
    /// at the first object that counts; any other aggregate is computed in full.
    pub(in crate::wgdl) fn aggregate_test(&self, st: &State, a: u16, ctx: Ctx, test: ZeroTest) -> Result<bool, RuntimeError> {
        let info = self.aggs[a as usize];
        if !(info.count && info.infallible) {
            let v = self.aggregate(st, a, ctx)?;
            return Ok(match test {
                ZeroTest::Zero => v == 0,
                ZeroTest::NonZero => v != 0,
                ZeroTest::Positive => v > 0,
                ZeroTest::NotPositive => v <= 0,
            });
        }
        let mut any = false;
        self.aggregate_scan(st, a, ctx, |v| {
            any = v != 0;
            !any
        })?;
        // A count is never negative: > 0 is != 0.
        Ok(match test {
            ZeroTest::NonZero | ZeroTest::Positive => any,
            ZeroTest::Zero | ZeroTest::NotPositive => !any,
        })
    }

    pub(in crate::wgdl) fn aggregate(&self, st: &State, a: u16, ctx: Ctx) -> Result<i64, RuntimeError> {
        let info = self.aggs[a as usize];
        let (mut n, mut sum_l, mut sum_d) = (0i64, 0i64, 0f64);
        self.aggregate_scan(st, a, ctx, |v| {
            if info.count {
                n += (v != 0) as i64;
            } else if info.double {
                sum_d += f64::from_bits(v as u64);
            } else {
                sum_l = sum_l.wrapping_add(v);
            }
            true
        })?;
        Ok(if info.count {
            n
        } else if info.double {
            sum_d.to_bits() as i64
        } else {
            sum_l
        })
    }

    /// Aggregate `a`'s expression for each live object of its class in creation order, handed
    /// to `f` until it returns `false`.
    fn aggregate_scan(&self, st: &State, a: u16, ctx: Ctx, mut f: impl FnMut(i64) -> bool) -> Result<(), RuntimeError> {
        let info = self.aggs[a as usize];
        let value = self.evaluator(info.expr);
        if let Some(g) = info.cells {
            let gi = &self.grids[g as usize];
            let mut env = crate::wgdl::program::Env::unbound_object(self, st, Ctx { this: ctx.this, bound: NONE }, None);
            for c in 0..gi.width * gi.height {
                env.rebind(c, 0);
                if !f(value(&env)?) {
                    break;
                }
            }
            return Ok(());
        }
        // One environment, rebound to each object in turn.
        let mut env = crate::wgdl::program::Env::new(self, st, Ctx { this: ctx.this, bound: NONE });
        for (i, o) in st.objects.iter().enumerate() {
            if !o.alive || !self.is_sub(o.class, info.class) {
                continue;
            }
            env.rebind(i as u32, o.base);
            if !f(value(&env)?) {
                break;
            }
        }
        Ok(())
    }
}
