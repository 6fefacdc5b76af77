//! A fast hasher for the reasoners' tables of small integer keys (symbols, term and atom
//! numbers): the multiply-rotate hash of rustc's `FxHasher`. The standard SipHash, built to
//! resist flooding by untrusted keys, took over a quarter of grounding's time on large games;
//! these keys are numbers the grounder made itself.

use std::hash::{BuildHasherDefault, Hasher};

/// The hasher state.
#[derive(Clone, Copy, Default)]
pub struct Fx(u64);

const K: u64 = 0xf135_7aea_2e62_a9c5;

impl Fx {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(K);
    }
}

impl Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u8(&mut self, x: u8) {
        self.add(x as u64);
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(x as u64);
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`Fx`].
pub type FxHashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<Fx>>;
/// A `HashSet` with [`Fx`].
pub type FxHashSet<K> = std::collections::HashSet<K, BuildHasherDefault<Fx>>;
