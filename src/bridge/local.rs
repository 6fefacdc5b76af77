//! A WGDL game played the way a bridge client plays its game: each decision is `select(n)` over
//! the legal moves in their listed order (the flat encoding), answered from the episode's prefix
//! and then by the protocol's uniform default policy (SplitMix64 from the policy seed, the same
//! numbers a Python or JavaScript client draws); the outcome carries the score and the trace.
//! So the prefix-tree search runs on a WGDL game and on an external one alike, and a WGDL twin
//! of an external game can be checked against it (tests/bridge_search.rs).

use super::process::{Fault, FaultKind};
use super::protocol::{Episode, Outcome};
use super::tree::Episodes;
use crate::game::{Game, Status, WgdlGame};
use crate::wgdl::probe::ValueRef;
use anyhow::Result;
use std::collections::VecDeque;

/// The protocol's default policy (docs/bridge.md, "The client's select").
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n): ⌊(next >> 11) · n / 2⁵³⌋.
    pub fn below(&mut self, n: u64) -> u64 {
        (((self.next_u64() >> 11) as u128 * n as u128) >> 53) as u64
    }
}

/// A WGDL game as an episode source.
pub struct WgdlEpisodes {
    pub game: WgdlGame,
    pub score: ValueRef,
    /// Decisions in one episode before it is stopped as a fault (a game that never ends).
    pub max_moves: u32,
    done: VecDeque<Result<Outcome, Fault>>,
}

impl WgdlEpisodes {
    pub fn new(game: WgdlGame, score: ValueRef, max_moves: u32) -> WgdlEpisodes {
        WgdlEpisodes { game, score, max_moves, done: VecDeque::new() }
    }

    /// Plays one episode.
    pub fn play(&self, ep: &Episode) -> Result<Outcome, Fault> {
        let game_fault = |what: String| Fault { kind: FaultKind::Game, message: format!("episode {}: {what}", ep.id) };
        let mut game = self.game.clone();
        game.seed = ep.seed;
        let mut st = game.initial().map_err(|e| game_fault(format!("the start state: {e}")))?;
        let mut policy = SplitMix64(ep.policy_seed);
        let mut legal = Vec::new();
        let mut trace = Vec::new();
        loop {
            game.legal(&st, &mut legal).map_err(|e| game_fault(e.to_string()))?;
            if game.status(&st, &legal) != Status::Running || legal.is_empty() {
                break;
            }
            if trace.len() as u32 >= self.max_moves {
                return Err(game_fault(format!("no end after {} decisions", self.max_moves)));
            }
            let n = legal.len() as u64;
            let choice = match ep.prefix.get(trace.len()) {
                Some(&c) if c < n => c,
                Some(&c) => return Err(game_fault(format!("the prefix chooses {c} at decision {} of {n} options", trace.len()))),
                None => policy.below(n),
            };
            game.apply(&mut st, legal[choice as usize]).map_err(|e| game_fault(e.to_string()))?;
            trace.push([choice, n]);
        }
        let score = game.program.read(&st, self.score);
        Ok(Outcome { id: ep.id, score, measures: Default::default(), trace })
    }
}

impl Episodes for WgdlEpisodes {
    fn start(&mut self, episode: Episode) -> Result<()> {
        let r = self.play(&episode);
        self.done.push_back(r);
        Ok(())
    }

    fn finish(&mut self) -> Result<Result<Outcome, Fault>> {
        self.done.pop_front().ok_or_else(|| anyhow::anyhow!("no episode in flight"))
    }
}
