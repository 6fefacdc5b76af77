//! Who stands where on the hex map (`hexOccupants`): the occupants listed once per move
//! generation in an [`OccCache`] (occupied cells and each side's sight as bits), and the reads the
//! hex built-ins make of them (`hex.free`, `hex.hidden`, `hex.approach`, `hex.stepToward`), with
//! or without the cache.

use crate::wgdl::program::Env;
use crate::wgdl::program::{Ctx, NONE, Program, RtKind, RuntimeError, State, rt};
use crate::wgdl::run::occupancy::{OccCache, bit};

thread_local! {
    /// The occupancy cache's buffers, reused from one move generation to the next.
    static OCC: std::cell::RefCell<OccCache> = const { std::cell::RefCell::new(OccCache::new()) };
}

impl Program {
    pub(in crate::wgdl) fn cell(&self, v: i64, op_index: usize) -> Result<usize, RuntimeError> {
        let n = self.hex.as_ref().map_or(0, |h| h.len());
        if v < 0 || v as usize >= n {
            return Err(rt(RtKind::OffMap { cell: v, last: n.saturating_sub(1) }, self.spans[op_index]));
        }
        Ok(v as usize)
    }

    /// Runs `f` with the occupants of `st` listed once (`None` for a game without occupants, or
    /// when a cache is already in use on this thread): for move generation, during which the
    /// state cannot change.
    pub(in crate::wgdl) fn with_occ<T>(
        &self,
        st: &State,
        f: impl FnOnce(Option<&OccCache>) -> Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        if self.occupants.is_none() {
            return f(None);
        }
        OCC.with(|o| match o.try_borrow_mut() {
            Ok(mut cache) => {
                self.fill_occ(&mut cache, st)?;
                f(Some(&cache))
            }
            Err(_) => f(None),
        })
    }

    /// `cache` made for `st`: its occupants listed, then their bits.
    fn fill_occ(&self, cache: &mut OccCache, st: &State) -> Result<(), RuntimeError> {
        let list = cache.list_mut();
        self.for_each_occupant(st, |_, pos, side| {
            list.push((pos, side));
            true
        })?;
        cache.fill(self.hex.as_deref(), self.players.len().max(1));
        Ok(())
    }

    /// The objects that stand on the hex map and count (`hexOccupants … while`), in object
    /// order: what the state view draws at full strength.
    pub fn counting_occupants(&self, st: &State) -> Result<Vec<u32>, RuntimeError> {
        let mut v = Vec::new();
        self.for_each_occupant(st, |i, _, _| {
            v.push(i);
            true
        })?;
        Ok(v)
    }

    /// The live occupants that count (`hexOccupants … while`), as (object, cell, side).
    fn for_each_occupant(&self, st: &State, mut f: impl FnMut(u32, i64, i64) -> bool) -> Result<(), RuntimeError> {
        let Some(occ) = &self.occupants else { return Ok(()) };
        // One environment, rebound to each object in turn.
        let mut env = crate::wgdl::program::Env::new(self, st, Ctx { this: NONE, bound: NONE });
        let cond = occ.cond.map(|c| self.evaluator(c));
        for (i, o) in st.objects.iter().enumerate() {
            if !o.alive || !self.is_sub(o.class, occ.class) {
                continue;
            }
            if let Some(cond) = &cond {
                env.rebind_this(i as u32, *o);
                if cond(&env)? == 0 {
                    continue;
                }
            }
            let pos = st.slots[(o.base + occ.pos) as usize];
            let side = st.slots[(o.base + occ.side) as usize];
            if !f(i as u32, pos, side) {
                break;
            }
        }
        Ok(())
    }

    /// Whether an occupant stands on `cell` (a cell of the map).
    #[inline]
    pub(in crate::wgdl) fn occupied(&self, env: &Env, cell: usize) -> Result<bool, RuntimeError> {
        if let Some(o) = env.occ {
            return Ok(o.occupied(cell));
        }
        let mut found = false;
        self.for_each_occupant(env.st, |_, pos, _| {
            found = pos == cell as i64;
            !found
        })?;
        Ok(found)
    }

    /// Whether no occupant of a side other than `me` sees `cell` (a cell of the map).
    #[inline]
    pub(in crate::wgdl) fn hidden(&self, env: &Env, h: &crate::wgdl::hex::HexMap, cell: usize, me: i64) -> Result<bool, RuntimeError> {
        if let Some(o) = env.occ {
            if let Some(bits) = o.seen_by_others(me) {
                return Ok(!bit(bits, cell));
            }
            return Ok(!o
                .list()
                .iter()
                .any(|&(pos, side)| side != me && pos >= 0 && (pos as usize) < h.len() && h.sees(pos as usize, cell)));
        }
        let mut hidden = true;
        self.for_each_occupant(env.st, |_, pos, side| {
            if side != me && pos >= 0 && (pos as usize) < h.len() && h.sees(pos as usize, cell) {
                hidden = false;
            }
            hidden
        })?;
        Ok(hidden)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wgdl::run::builtins::{Builtin, On};
    use rand::{RngExt, SeedableRng};

    /// `hex.approach` with occupancy as bits (move generation) and without (consequences) gives
    /// the definition's cell: the first in walk order from `from`, within the budget, other
    /// than `from`, free, in range of the target and seeing it.
    #[test]
    fn hex_approach_finds_the_definitions_cell() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("games/hex_arena.wgdl");
        let p = crate::wgdl::load(&path).expect("the arena loads").program;
        let h = p.hex.clone().expect("a hex map");
        let occ_info = p.occupants.clone().expect("occupants");
        let open: Vec<usize> = (0..h.len()).filter(|&c| !h.wall[c]).collect();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for round in 0..4 {
            let mut st = p.initial_state().expect("starts");
            let mages: Vec<usize> = (0..st.objects.len()).filter(|&i| p.is_sub(st.objects[i].class, occ_info.class)).collect();
            for (k, &m) in mages.iter().enumerate() {
                let base = st.objects[m].base as usize;
                st.slots[base + occ_info.pos as usize] = open[rng.random_range(0..open.len())] as i64;
                // Round 0: everyone stands; later, some have fallen (not occupants).
                if round > 0 && k % 2 == round % 2 {
                    let hp = p.classes[st.objects[m].class as usize].attrs.iter().position(|a| a.name == "hp").expect("hp");
                    st.slots[base + hp] = 0;
                }
            }
            let mut cache = OccCache::new();
            p.fill_occ(&mut cache, &st).expect("occupants listed");
            let ctx = Ctx { this: NONE, bound: NONE };
            let with = crate::wgdl::program::Env::with_occ(&p, &st, ctx, Some(&cache));
            let without = crate::wgdl::program::Env::new(&p, &st, ctx);
            let approach = Builtin::find(On::Hex, "approach").expect("a built-in").run();
            let occupied: Vec<usize> = cache.list().iter().map(|&(pos, _)| pos as usize).collect();
            for &from in &open {
                for &target in open.iter().step_by(3) {
                    for budget in [-1, 0, 2, 5, 9, 14] {
                        for range in [-1, 0, 1, 3, 6, 12] {
                            let want = h
                                .by_walk(from)
                                .iter()
                                .map(|&c| c as usize)
                                .take_while(|&c| h.walk(from, c) <= budget)
                                .find(|&c| c != from && h.distance(c, target) <= range && h.sees(c, target) && !occupied.contains(&c))
                                .map_or(-1, |c| c as i64);
                            let args = [from as i64, target as i64, budget, range];
                            for env in [&with, &without] {
                                assert_eq!(approach(env, 0, &args, 0), Ok(want), "approach{args:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}
