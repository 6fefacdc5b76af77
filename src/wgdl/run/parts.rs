//! The parts of a state, as bits of one [`Parts`] set: what an expression reads and what a
//! consequence writes are such sets (`deps.rs` computes them), and a state's [`Dirty`] masks
//! collect the parts written since outcomes, goals and rules were last checked. The families
//! and how they fold onto the bits are `deps.rs`'s opening paragraph.

/// A set of state parts, one bit each (families folded onto their bits): attribute offsets
/// 0..32 (every class's attribute k, modulo 32), absolute slots of objects 32..96 (modulo 64: a
/// named object's attribute), game value store nodes 96..112 (modulo 16), then the grids,
/// deletions, creations, the clock, sessions, moves and the turn.
pub type Parts = u128;
const ATTR_BITS: u32 = 32;
const SLOT_BASE: u32 = 32;
const SLOT_BITS: u32 = 64;
const STORE_BASE: u32 = 96;
const STORE_BITS: u32 = 16;
/// Every store node's bit.
pub(in crate::wgdl) const STORE: Parts = ((1 << STORE_BITS) - 1) << STORE_BASE;
pub(in crate::wgdl) const GRID: Parts = 1 << 112;
/// An object was deleted (every read through an object checks that it is live).
pub(in crate::wgdl) const GONE: Parts = 1 << 113;
/// An object was created (aggregates over a class see it).
pub(in crate::wgdl) const BORN: Parts = 1 << 114;
pub(in crate::wgdl) const OBJECTS: Parts = GONE | BORN;
pub(in crate::wgdl) const CLOCK: Parts = 1 << 115;
pub(in crate::wgdl) const SESSIONS: Parts = 1 << 116;
pub(in crate::wgdl) const MOVES: Parts = 1 << 117;
pub(in crate::wgdl) const TURN: Parts = 1 << 118;
pub(in crate::wgdl) const ALL: Parts = Parts::MAX;

/// The bit of attribute offset `o`.
#[inline]
pub(in crate::wgdl) fn attr(o: u32) -> Parts {
    // (A 64-bit shift, then a constant one: a variable 128-bit shift costs branches.)
    (1u64 << (o % ATTR_BITS)) as Parts
}

/// The bit of absolute slot `s` of an object (marked by every write to it, read by `Slot`).
#[inline]
pub(in crate::wgdl) fn slot(s: usize) -> Parts {
    ((1u64 << (s % SLOT_BITS as usize)) as Parts) << SLOT_BASE
}

/// The bit of store node `n` (marked for the node and its ancestors by an increase).
#[inline]
pub(in crate::wgdl) fn store(n: u32) -> Parts {
    ((1u64 << (n % STORE_BITS)) as Parts) << STORE_BASE
}

/// A state's changes, as masks: since outcomes and goals were last checked (`checks`), and since
/// rules last stood still (`rules`). It never makes two states different: equality and hashing
/// ignore it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dirty {
    pub checks: Parts,
    pub rules: Parts,
}

impl Dirty {
    /// Marks `parts` written.
    #[inline]
    pub(in crate::wgdl) fn mark(&mut self, parts: Parts) {
        self.checks |= parts;
        self.rules |= parts;
    }
}

impl PartialEq for Dirty {
    fn eq(&self, _: &Dirty) -> bool {
        true
    }
}

impl Eq for Dirty {}

impl std::hash::Hash for Dirty {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}
