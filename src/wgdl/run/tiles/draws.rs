//! Seeded chance on tile grids (games/README.md §9.13): the next draw from a state's own
//! stream ([`State::draw`], also what `byChance` moves are drawn with), and the [`Palette`] a
//! refill or a deal draws tile values from, uniformly or by weight (the module doc of `tiles/`).

use crate::wgdl::program::*;

impl State {
    /// The next draw from the game's stream, in `0..n` (`n` ≥ 1).
    #[inline]
    pub fn draw(&mut self, n: u64) -> u64 {
        let v = crate::rng::mix(self.rng);
        self.rng = self.rng.wrapping_add(1);
        v % n
    }
}

/// A weight above this counts as this: 16 weights add up far below 2^64.
const MAX_WEIGHT: i64 = 1 << 32;

/// The tile values 1 … n of a deal or a refill and how one is drawn: uniformly, one draw of n
/// (no weights, or the weights of the values in play all equal), or one draw of the weights'
/// total, giving the first value whose cumulative weight passes it. A value past the weights
/// given weighs 0, a negative weight counts as 0.
pub(super) struct Palette {
    n: u64,
    /// The cumulative weights of values 1 … `weighted` (none: uniform).
    cum: [u64; TileOp::MAX_WEIGHTS],
    weighted: usize,
    /// How many values can come out.
    pub(super) values: i64,
}

impl Palette {
    pub(super) fn new(n: u64, weights: &[i64]) -> Palette {
        let listed = weights.len().min(TileOp::MAX_WEIGHTS).min(usize::try_from(n).unwrap_or(usize::MAX));
        let weight = |k: usize| weights.get(k).map_or(0, |&w| w.clamp(0, MAX_WEIGHT) as u64);
        let mut p = Palette { n, cum: [0; TileOp::MAX_WEIGHTS], weighted: 0, values: n as i64 };
        let first = weight(0);
        if !(0..listed).all(|k| weight(k) == first) || (first > 0 && (listed as u64) < n) {
            let mut total = 0;
            for k in 0..listed {
                total += weight(k);
                p.cum[k] = total;
            }
            p.weighted = listed;
            p.values = (0..listed).filter(|&k| weight(k) > 0).count() as i64;
        }
        p
    }

    /// The next value from the state's stream: always exactly one draw.
    #[inline]
    pub(super) fn draw(&self, st: &mut State) -> i64 {
        match self.weighted {
            0 => 1 + st.draw(self.n) as i64,
            k => {
                let v = st.draw(self.cum[k - 1]);
                1 + self.cum[..k].partition_point(|&c| c <= v) as i64
            }
        }
    }
}
