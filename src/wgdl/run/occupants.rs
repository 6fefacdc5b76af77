//! Who stands where on the hex map (`hexOccupants`): the occupants listed once per move
//! generation in an [`OccCache`] (occupied cells and each side's sight as bits), and the reads the
//! hex built-ins make of them (`hex.free`, `hex.hidden`, `hex.approach`, `hex.stepToward`), with
//! or without the cache.

use crate::wgdl::fast::Env;
use crate::wgdl::program::{Ctx, NONE, Program, RtKind, RuntimeError, State, rt};

thread_local! {
    /// The occupancy cache's buffers, reused from one move generation to the next.
    static OCC: std::cell::RefCell<OccCache> = const { std::cell::RefCell::new(OccCache::new()) };
}

/// The occupants of the state being searched for moves (which cannot change meanwhile): their
/// (cell, side), the occupied cells as bits, and per side of the game the cells some occupant of
/// another side sees. Made once per move generation ([`Program::with_occ`]) and read through
/// [`crate::wgdl::fast::Env::occ`] instead of a scan of the objects per `hex.free` or `hex.hidden`.
pub(in crate::wgdl) struct OccCache {
    list: Vec<(i64, i64)>,
    occupied: Vec<u64>,
    /// `words` per side of the game (0 … players − 1), side after side: the cells some
    /// occupant of another side sees.
    seen_by_others: Vec<u64>,
    /// Scratch: per side the cells its own occupants see, then one row for occupants whose
    /// side is none of the game's (another side to everyone).
    seen_by: Vec<u64>,
    words: usize,
}

impl OccCache {
    const fn new() -> OccCache {
        OccCache { list: Vec::new(), occupied: Vec::new(), seen_by_others: Vec::new(), seen_by: Vec::new(), words: 0 }
    }

    /// The occupied cells as bits.
    pub(in crate::wgdl) fn occupied_bits(&self) -> &[u64] {
        &self.occupied
    }

    /// The cells that some occupant of a side other than `me` sees, as bits (`None` for a side
    /// that is not one of the game's).
    pub(in crate::wgdl) fn seen_by_others(&self, me: i64) -> Option<&[u64]> {
        if me < 0 {
            return None;
        }
        let at = me as usize * self.words;
        self.seen_by_others.get(at..at + self.words).filter(|_| at < self.seen_by_others.len())
    }

    /// One pass over the occupants: the occupied bits and each side's sight; then per side the
    /// sight of the others (a few words per pair of sides). The sight rows are scratch on the
    /// stack when they fit in 64 words (every shipped map and game), else the cache's own.
    fn fill(&mut self, p: &Program, st: &State) -> Result<(), RuntimeError> {
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        p.for_each_occupant(st, |_, pos, side| {
            list.push((pos, side));
            true
        })?;
        self.list = list;
        let Some(h) = &p.hex else { return Ok(()) };
        let (n, words) = (h.len(), h.words());
        let sides = p.players.len().max(1);
        self.words = words;
        reset(&mut self.occupied, words);
        reset(&mut self.seen_by_others, sides * words);
        if words == 0 {
            return Ok(());
        }
        // Per side the cells its occupants see; row `sides`: occupants of none of the sides.
        let mut stack = [0u64; 64];
        let seen: &mut [u64] = match stack.get_mut(..(sides + 1) * words) {
            Some(rows) => rows,
            None => {
                reset(&mut self.seen_by, (sides + 1) * words);
                &mut self.seen_by
            }
        };
        for &(pos, side) in &self.list {
            if pos >= 0 && (pos as usize) < n {
                let pos = pos as usize;
                self.occupied[pos / 64] |= 1 << (pos % 64);
                let row = if (0..sides as i64).contains(&side) { side as usize } else { sides };
                for (s, r) in seen[row * words..(row + 1) * words].iter_mut().zip(h.sees_row(pos)) {
                    *s |= r;
                }
            }
        }
        for (me, others) in self.seen_by_others.chunks_exact_mut(words).enumerate() {
            for (other, row) in seen.chunks_exact(words).enumerate() {
                if other != me {
                    for (o, r) in others.iter_mut().zip(row) {
                        *o |= r;
                    }
                }
            }
        }
        Ok(())
    }
}

/// `v` as `n` zeros (its buffer kept).
#[inline]
fn reset(v: &mut Vec<u64>, n: usize) {
    if v.len() == n {
        v.fill(0);
    } else {
        v.clear();
        v.resize(n, 0);
    }
}

#[inline]
fn bit(bits: &[u64], c: usize) -> bool {
    bits[c / 64] >> (c % 64) & 1 == 1
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
                cache.fill(self, st)?;
                f(Some(&cache))
            }
            Err(_) => f(None),
        })
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
        let mut env = crate::wgdl::fast::Env::new(self, st, Ctx { this: NONE, bound: NONE });
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
            return Ok(bit(&o.occupied, cell));
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
            return Ok(!o.list.iter().any(|&(pos, side)| side != me && pos >= 0 && (pos as usize) < h.len() && h.sees(pos as usize, cell)));
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
            cache.fill(&p, &st).expect("occupants listed");
            let ctx = Ctx { this: NONE, bound: NONE };
            let with = crate::wgdl::fast::Env::with_occ(&p, &st, ctx, Some(&cache));
            let without = crate::wgdl::fast::Env::new(&p, &st, ctx);
            let approach = Builtin::find(On::Hex, "approach").expect("a built-in").run();
            let occupied: Vec<usize> = cache.list.iter().map(|&(pos, _)| pos as usize).collect();
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
