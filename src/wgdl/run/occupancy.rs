//! The occupants of one state on the hex map, listed once per move generation ([`OccCache`]):
//! their (cell, side), the occupied cells as bits, and per side the cells some occupant of
//! another side sees. Plain data over the map, below the program: `occupants.rs` lists the
//! occupants and reads the cache for the hex built-ins.

use crate::wgdl::hex::HexMap;

/// The occupants of the state being searched for moves (which cannot change meanwhile): their
/// (cell, side), the occupied cells as bits, and per side of the game the cells some occupant of
/// another side sees. Made once per move generation (`Program::with_occ`) and read through
/// `Env::occ` instead of a scan of the objects per `hex.free` or `hex.hidden`.
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
    pub(in crate::wgdl) const fn new() -> OccCache {
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

    /// The occupants' (cell, side), to be listed afresh (cleared) before [`OccCache::fill`].
    pub(in crate::wgdl) fn list_mut(&mut self) -> &mut Vec<(i64, i64)> {
        self.list.clear();
        &mut self.list
    }

    /// The occupants' (cell, side), as listed.
    pub(in crate::wgdl) fn list(&self) -> &[(i64, i64)] {
        &self.list
    }

    /// Whether an occupant stands on `c` (a cell of the map).
    #[inline]
    pub(in crate::wgdl) fn occupied(&self, c: usize) -> bool {
        bit(&self.occupied, c)
    }

    /// One pass over the occupants listed ([`OccCache::list_mut`]) on map `h`: the occupied bits
    /// and each of the `sides` sides' sight; then per side the sight of the others (a few words per pair of sides). The sight rows are scratch on the
    /// stack when they fit in 64 words (every shipped map and game), else the cache's own.
    pub(in crate::wgdl) fn fill(&mut self, h: Option<&HexMap>, sides: usize) {
        let Some(h) = h else { return };
        let (n, words) = (h.len(), h.words());
        self.words = words;
        reset(&mut self.occupied, words);
        reset(&mut self.seen_by_others, sides * words);
        if words == 0 {
            return;
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
pub(in crate::wgdl) fn bit(bits: &[u64], c: usize) -> bool {
    bits[c / 64] >> (c % 64) & 1 == 1
}
