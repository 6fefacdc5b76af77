//! The differential evaluator: the dynamic ground rules as a propositional net that is
//! updated, not re-run. Each rule keeps a count of its literals that fail (`unsat`); each
//! derived atom keeps the number of its rules that hold (`support`) and is true while that is
//! above zero. Changing an input (a `true` or `does` atom) touches only the rules it appears
//! in; a rule whose count crosses zero moves its head's support, and the heads whose support
//! crossed zero are settled **level by level** (an atom's level is one above the highest atom
//! its rules read), so every atom flips at most once per update and the counts stay exact.
//! A move in Connect Four changes a handful of inputs and touches a few dozen of the 592
//! rules, where the full evaluator ([`super::ground::Grounded::eval`]) runs all of them.
//!
//! Counting cannot retract an atom that supports itself through a cycle, so descriptions with
//! a recursive stratum keep the full evaluator ([`Net::new`] returns `None`). The results are
//! the same as the full evaluator's, state by state (tested in `tests/gdl.rs`); only the time
//! differs, and the full evaluator stays selectable ([`super::GdlGame::with_reasoner`]).

use super::ground::{AtomId, Grounded};

/// The net's fixed part, shared by every thread.
#[derive(Clone, Debug)]
pub struct Net {
    /// Per rule: its head.
    heads: Vec<AtomId>,
    /// Per rule: its positive literal count (its `unsat` when no input holds).
    npos: Vec<u32>,
    /// Per atom: where its occurrences start in `occ` (one more entry than atoms).
    occ_start: Vec<u32>,
    /// Occurrences: rule number × 2, plus 1 for a negative literal.
    occ: Vec<u32>,
    /// Per atom: its level (0 for inputs and atoms no rule derives).
    level: Vec<u16>,
    levels: usize,
    /// The static atoms that hold, a bit per atom.
    statics: Vec<u64>,
    /// Per atom: the base proposition it sets when it is a `next` atom, else `u32::MAX`.
    next_of: Vec<u32>,
    /// Words of a state's bit set.
    state_words: usize,
}

/// One thread's copy of the net's changing part: the model and the counts behind it.
#[derive(Clone, Debug)]
pub struct NetState {
    /// Every atom that holds (statics included), a bit each.
    pub model: Vec<u64>,
    unsat: Vec<u32>,
    support: Vec<u32>,
    /// Per level: the atoms whose support crossed zero since they were last settled.
    buckets: Vec<Vec<AtomId>>,
    queued: Vec<u64>,
    /// The next state: the base propositions whose `next` atom holds, kept as they flip.
    pub next: Vec<u64>,
}

#[inline]
fn bit(m: &[u64], a: AtomId) -> bool {
    m[a as usize / 64] >> (a % 64) & 1 == 1
}

#[inline]
fn toggle(m: &mut [u64], a: AtomId) {
    m[a as usize / 64] ^= 1 << (a % 64);
}

impl Net {
    /// The net of a grounded description whose `next` atoms set the base propositions
    /// `next_to_base` gives (of `state_words` words); `None` when a stratum is recursive (or
    /// the ground rules have a cycle), which counting cannot evaluate.
    pub fn new(g: &Grounded, next_to_base: &[(AtomId, u32)], state_words: usize) -> Option<Net> {
        if g.groups.iter().any(|gr| gr.recursive) {
            return None;
        }
        let atoms = g.atoms.list.len();
        let mut heads = Vec::new();
        let mut npos = Vec::new();
        let mut count = vec![0u32; atoms + 1];
        let rules = || g.groups.iter().flat_map(|gr| gr.bodies.iter().zip(&gr.heads).map(move |(b, &h)| (gr, *b, h)));
        for (gr, (at, np, nn), h) in rules() {
            heads.push(h);
            npos.push(np as u32);
            for &a in &gr.lits[at as usize..at as usize + np as usize + nn as usize] {
                count[a as usize] += 1;
            }
        }
        let mut occ_start = vec![0u32; atoms + 1];
        for a in 0..atoms {
            occ_start[a + 1] = occ_start[a] + count[a];
        }
        let mut fill = occ_start.clone();
        let mut occ = vec![0u32; occ_start[atoms] as usize];
        for (r, (gr, (at, np, nn), _)) in rules().enumerate() {
            let lits = &gr.lits[at as usize..at as usize + np as usize + nn as usize];
            for (k, &a) in lits.iter().enumerate() {
                occ[fill[a as usize] as usize] = (r as u32) << 1 | (k >= np as usize) as u32;
                fill[a as usize] += 1;
            }
        }
        // Levels: relax until stable; more rounds than rules means a cycle.
        let mut level = vec![0u16; atoms];
        for _ in 0..=heads.len() + 1 {
            let mut changed = false;
            for (gr, (at, np, nn), h) in rules() {
                let lits = &gr.lits[at as usize..at as usize + np as usize + nn as usize];
                let l = 1 + lits.iter().map(|&a| level[a as usize]).max().unwrap_or(0);
                if l > level[h as usize] {
                    if l == u16::MAX {
                        return None;
                    }
                    level[h as usize] = l;
                    changed = true;
                }
            }
            if !changed {
                let levels = 1 + *level.iter().max().unwrap_or(&0) as usize;
                let mut next_of = vec![u32::MAX; atoms];
                for &(n, b) in next_to_base {
                    next_of[n as usize] = b;
                }
                let statics = g.statics.clone();
                return Some(Net { heads, npos, occ_start, occ, level, levels, statics, next_of, state_words });
            }
        }
        None
    }

    /// The net with no input holding, settled.
    pub fn fresh(&self) -> NetState {
        let mut s = NetState {
            model: self.statics.clone(),
            unsat: self.npos.clone(),
            support: vec![0; self.level.len()],
            buckets: vec![Vec::new(); self.levels],
            queued: vec![0; self.statics.len()],
            next: vec![0; self.state_words],
        };
        // A static `next` atom (`(next done)` as a fact) holds in every next state; it never
        // flips, so it is set here once.
        for (a, &b) in self.next_of.iter().enumerate() {
            if b != u32::MAX && bit(&self.statics, a as AtomId) {
                toggle(&mut s.next, b);
            }
        }
        for (r, &h) in self.heads.iter().enumerate() {
            if s.unsat[r] == 0 {
                s.support[h as usize] += 1;
                self.enqueue(&mut s, h);
            }
        }
        self.settle(&mut s);
        s
    }

    #[inline]
    fn enqueue(&self, s: &mut NetState, h: AtomId) {
        if !bit(&s.queued, h) {
            toggle(&mut s.queued, h);
            s.buckets[self.level[h as usize] as usize].push(h);
        }
    }

    /// Atom `a` has just flipped to `on`: its rules' counts follow, and heads whose support
    /// crossed zero are queued.
    #[inline]
    fn spread(&self, s: &mut NetState, a: AtomId, on: bool) {
        let (lo, hi) = (self.occ_start[a as usize] as usize, self.occ_start[a as usize + 1] as usize);
        for &o in &self.occ[lo..hi] {
            let r = (o >> 1) as usize;
            // The literal now holds when the atom's new value differs from its sign.
            let holds = on != (o & 1 == 1);
            let old = s.unsat[r];
            let new = if holds { old.wrapping_sub(1) } else { old + 1 };
            s.unsat[r] = new;
            if old == 0 || new == 0 {
                // The rule started or stopped holding.
                let h = self.heads[r];
                let sup = &mut s.support[h as usize];
                if new == 0 {
                    *sup += 1;
                } else {
                    *sup -= 1;
                }
                if *sup == u32::from(new == 0) {
                    self.enqueue(s, h);
                }
            }
        }
    }

    /// Sets input atom `a` (a `true` or `does` atom) to `on`; [`Net::settle`] finishes the
    /// update once every input is set.
    #[inline]
    pub fn set_input(&self, s: &mut NetState, a: AtomId, on: bool) {
        if bit(&s.model, a) != on {
            toggle(&mut s.model, a);
            self.spread(s, a, on);
        }
    }

    /// Settles the queued atoms, lowest level first.
    pub fn settle(&self, s: &mut NetState) {
        for l in 1..self.levels {
            if s.buckets[l].is_empty() {
                continue;
            }
            let mut bucket = std::mem::take(&mut s.buckets[l]);
            for &h in &bucket {
                toggle(&mut s.queued, h);
                let on = s.support[h as usize] > 0;
                if bit(&s.model, h) != on {
                    toggle(&mut s.model, h);
                    let b = self.next_of[h as usize];
                    if b != u32::MAX {
                        toggle(&mut s.next, b);
                    }
                    self.spread(s, h, on);
                }
            }
            bucket.clear();
            s.buckets[l] = bucket;
        }
    }
}
