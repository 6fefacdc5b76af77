//! Run time of turns and rounds: which object acts next (turn order, grouped or alternating,
//! `while` conditions), the end of a turn and of a round (round hooks, then rules), and the
//! outcomes (`winner`/`draw` lines). Everything here is generic: a game says in WGDL which class
//! takes turns and which attribute is a side; this file only carries those declarations out.

use crate::wgdl::program::Env;
use crate::wgdl::program::{ActionKind, BindKind, Cons, Ctx, GodSel, NONE, Program, RuntimeError, State};

impl Program {
    /// The side (player index) of a turn-taking object; 0 without turns or actor.
    pub fn side_of(&self, st: &State, obj: u32) -> u8 {
        match (&self.turn, st.objects.get(obj as usize)) {
            (Some(t), Some(o)) => st.slots[(o.base + t.side) as usize] as u8,
            _ => 0,
        }
    }

    /// Turn-order key of an object: (side, rank) grouped, (rank, side) alternating, where rank
    /// counts earlier objects of the same side.
    fn turn_key(&self, st: &State, obj: u32) -> (i64, i64) {
        let t = self.turn.as_ref().expect("turns declared");
        let side_of = |o: usize| st.slots[(st.objects[o].base + t.side) as usize];
        let side = side_of(obj as usize);
        let rank = (0..obj as usize).filter(|&o| self.is_sub(st.objects[o].class, t.class) && side_of(o) == side).count() as i64;
        if t.alternating { (rank, side) } else { (side, rank) }
    }

    /// The initial objects of the turn class in creation order, when that is their turn order
    /// in every state of the game: no consequence writes the side attribute
    /// ([`TurnInfo::side_written`]) or creates an object that may be of the turn class, and the
    /// initial sides put the objects in creation order. `None` otherwise (and without turns).
    pub(in crate::wgdl) fn fixed_turn_order(&self) -> Option<Vec<u32>> {
        let t = self.turn.as_ref()?;
        if t.side_written {
            return None;
        }
        for cons in &self.conses {
            if let Cons::Create { god, .. } = cons.code {
                match god {
                    GodSel::Fixed(g) if !self.is_sub(self.gods[g as usize].class, t.class) => {}
                    _ => return None,
                }
            }
        }
        // The keys `next_actor` ranks by, from the initial values (a parameter may change them:
        // `with_parameters` asks again).
        let mut order = Vec::new();
        let mut keys: Vec<(i64, i64)> = Vec::new();
        let mut sides: Vec<i64> = Vec::new();
        for (id, &g) in self.initial.iter().enumerate() {
            let god = &self.gods[g as usize];
            if !self.is_sub(god.class, t.class) {
                continue;
            }
            let side = *god.init.get(t.side as usize)?;
            let rank = sides.iter().filter(|&&s| s == side).count() as i64;
            sides.push(side);
            let key = if t.alternating { (rank, side) } else { (side, rank) };
            if keys.last().is_some_and(|&k| k >= key) {
                return None;
            }
            keys.push(key);
            order.push(id as u32);
        }
        Some(order)
    }

    /// The next object to act after `after` in this round (`None`: from the round's start), if
    /// any: live objects of the turn class whose `while` condition holds.
    pub(in crate::wgdl) fn next_actor(&self, st: &State, after: Option<u32>) -> Result<Option<u32>, RuntimeError> {
        let t = self.turn.as_ref().expect("turns declared");
        if let Some(order) = &self.turn_order {
            // The order is creation order: the objects after `after`, in turn, as the ranking
            // below would visit (and evaluate `while` on) them.
            let from = match after.filter(|&a| a != NONE) {
                None => Some(0),
                Some(a) => order.binary_search(&a).ok().map(|i| i + 1),
            };
            if let Some(from) = from {
                for &i in &order[from..] {
                    if !st.objects[i as usize].alive {
                        continue;
                    }
                    if let Some(c) = t.cond
                        && self.eval(st, c, Ctx { this: i, bound: NONE })? == 0
                    {
                        continue;
                    }
                    return Ok(Some(i));
                }
                return Ok(None);
            }
        }
        let after_key = after.filter(|&a| a != NONE).map(|a| self.turn_key(st, a));
        let mut best: Option<((i64, i64), u32)> = None;
        // Ranks counted in one pass (sides 0..8; any other side is counted by `turn_key`).
        let mut ranks = [0i64; 8];
        for (i, o) in st.objects.iter().enumerate() {
            if !self.is_sub(o.class, t.class) {
                continue;
            }
            let side = st.slots[(o.base + t.side) as usize];
            let rank = match ranks.get_mut(side as usize) {
                Some(r) if side >= 0 => {
                    *r += 1;
                    *r - 1
                }
                // Not counted here: the key below comes from `turn_key`.
                _ => 0,
            };
            if !o.alive {
                continue;
            }
            let key =
                if (0..8).contains(&side) { if t.alternating { (rank, side) } else { (side, rank) } } else { self.turn_key(st, i as u32) };
            if after_key.is_some_and(|a| key <= a) || best.is_some_and(|(b, _)| key >= b) {
                continue;
            }
            if let Some(c) = t.cond
                && self.eval(st, c, Ctx { this: i as u32, bound: NONE })? == 0
            {
                continue;
            }
            best = Some((key, i as u32));
        }
        Ok(best.map(|(_, i)| i))
    }

    /// Ends the acting object's turn: the next object in order acts; after the last one the
    /// round ends (round hooks, then rules) and the first one acts again.
    pub(in crate::wgdl) fn end_turn(&self, st: &mut State) -> Result<(), RuntimeError> {
        st.end_turn = false;
        if self.turn.is_none() {
            return Ok(());
        }
        st.turns += 1;
        st.dirty.mark(crate::wgdl::parts::TURN);
        let next = if st.actor == NONE { None } else { self.next_actor(st, Some(st.actor))? };
        st.actor = match next {
            Some(n) => n,
            None => {
                st.round += 1;
                self.run_round_hooks(st)?;
                self.fire_rules(st)?;
                st.end_turn = false;
                self.next_actor(st, None)?.unwrap_or(NONE)
            }
        };
        st.to_move = self.side_of(st, st.actor);
        Ok(())
    }

    fn run_round_hooks(&self, st: &mut State) -> Result<(), RuntimeError> {
        for &h in &self.round_hooks {
            let a = &self.actions[h as usize];
            debug_assert_eq!(a.kind, ActionKind::OnRound);
            let class = a.class.expect("round hooks have a class");
            let n = st.objects.len();
            for this in 0..n {
                if !st.objects[this].alive || !self.is_sub(st.objects[this].class, class) {
                    continue;
                }
                let this = this as u32;
                match a.bind {
                    BindKind::Instance(bc) => {
                        for b in 0..n {
                            if !st.objects[this as usize].alive {
                                break;
                            }
                            if !st.objects[b].alive || !self.is_sub(st.objects[b].class, bc) {
                                continue;
                            }
                            let ctx = Ctx { this, bound: b as u32 };
                            if self.conditions_hold(st, a, ctx)? {
                                self.run_consequences(st, h, ctx, 0)?;
                            }
                        }
                    }
                    _ => {
                        let ctx = Ctx { this, bound: NONE };
                        if self.conditions_hold(st, a, ctx)? {
                            self.run_consequences(st, h, ctx, 0)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Records the first `winner`/`draw` line that holds (once decided, the outcome stays).
    pub(in crate::wgdl) fn check_outcomes(&self, st: &mut State) -> Result<(), RuntimeError> {
        if st.outcome != 0 {
            return Ok(());
        }
        // Every line was false at the last check: only those that read a changed part can hold.
        let mut won = None;
        {
            let env = Env::new(self, st, Ctx { this: NONE, bound: NONE });
            for o in &self.outcomes {
                if o.reads & st.dirty.checks != 0 && self.eval_env(&env, o.expr)? != 0 {
                    won = Some(o.winner.map_or(1, |k| k + 2));
                    break;
                }
            }
        }
        if let Some(w) = won {
            st.outcome = w;
        }
        Ok(())
    }
}
