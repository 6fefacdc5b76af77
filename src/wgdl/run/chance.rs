//! Chance moves (extension, `byChance`; games/README.md §10): a state where a `byChance`
//! action has a move is a chance node, whose moves are its outcomes, each with probability
//! weight ÷ the sum of the weights. Searches and the commands never choose there: the outcome
//! is drawn from the state's own stream ([`Program::resolve_chance`]), so a game stays a pure
//! function of its seed and its choices; the OpenSpiel door shows the node with its
//! probabilities instead (`doors/`).

use super::program::{Action, Program, RtKind, RuntimeError, State, rt};
use crate::wgdl::program::Env;

/// The most chance moves in a row before it is an error (a rule that keeps rolling).
pub const MAX_CHANCE_CHAIN: u32 = 10_000;

impl Program {
    /// Whether `legal` (the moves of some state) are chance's: the state is a chance node.
    #[inline]
    pub fn is_chance(&self, legal: &[Action]) -> bool {
        self.has_chance && legal.first().is_some_and(|m| self.actions[m.def as usize].chance.is_some())
    }

    /// The weight of each chance move of `legal` (a negative weight counts as 0, one above
    /// 2^32 as 2^32), into `out`.
    pub fn chance_weights(&self, st: &State, legal: &[Action], out: &mut Vec<i64>) -> Result<(), RuntimeError> {
        out.clear();
        for &m in legal {
            out.push(self.chance_weight(st, m)?);
        }
        Ok(())
    }

    /// One of the chance moves `legal`, drawn from the state's stream by weight: one draw of
    /// their number when the weights are equal, else one draw of the weights' sum (the first
    /// move whose running sum passes it), as refills draw (§9.12).
    /// Nothing is allocated: the weights are evaluated where they are needed (twice when they
    /// differ, once to sum and once to find the move).
    pub fn draw_chance(&self, st: &mut State, legal: &[Action]) -> Result<Action, RuntimeError> {
        if legal.iter().all(|m| matches!(self.actions[m.def as usize].chance, Some(None))) {
            return Ok(legal[st.draw(legal.len() as u64) as usize]);
        }
        let (mut total, mut first, mut equal) = (0i64, None, true);
        for &m in legal {
            let w = self.chance_weight(st, m)?;
            equal &= *first.get_or_insert(w) == w;
            total += w;
        }
        if total <= 0 {
            let info = &self.actions[legal[0].def as usize];
            return Err(rt(RtKind::NoChance { action: info.name.clone() }, info.span));
        }
        if equal {
            return Ok(legal[st.draw(legal.len() as u64) as usize]);
        }
        let v = st.draw(total as u64) as i64;
        let mut sum = 0;
        for &m in legal {
            sum += self.chance_weight(st, m)?;
            if v < sum {
                return Ok(m);
            }
        }
        Ok(legal[legal.len() - 1])
    }

    /// The weight of chance move `m`: its `weight` expression (negative: 0; above 2^32: 2^32),
    /// or 1.
    fn chance_weight(&self, st: &State, m: Action) -> Result<i64, RuntimeError> {
        Ok(match self.actions[m.def as usize].chance {
            Some(Some(e)) => {
                let env = Env::unbound_object(self, st, super::program::Ctx { this: m.this, bound: m.bound }, None);
                self.eval_env(&env, e)?.clamp(0, 1 << 32)
            }
            _ => 1,
        })
    }

    /// Plays chance's moves, drawn from the state's stream, until the state is not a chance
    /// node (`buf` holds the move lists). Nothing happens in a game without `byChance`.
    pub fn resolve_chance(&self, st: &mut State, buf: &mut Vec<Action>) -> Result<(), RuntimeError> {
        if !self.has_chance {
            return Ok(());
        }
        for _ in 0..MAX_CHANCE_CHAIN {
            self.legal_actions(st, buf)?;
            if !self.is_chance(buf) {
                return Ok(());
            }
            let m = self.draw_chance(st, buf)?;
            self.apply(st, m)?;
        }
        let info = &self.actions[buf[0].def as usize];
        Err(rt(RtKind::RunawayChance { action: info.name.clone(), limit: MAX_CHANCE_CHAIN }, info.span))
    }
}
