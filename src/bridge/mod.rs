//! Games that run in their own process (issue 58): the bridge protocol of docs/bridge.md from
//! playforge's side. A game process, in any language, connects back, introduces itself
//! (`hello`), and plays episodes: playforge sends a seed, the settings and a prefix of choices;
//! the game replays the prefix, plays on by its default policy and reports its score, its
//! measures and the whole trace (`outcome`).
//!
//! One file per concern: [`protocol`] (the messages, parsed and checked, never trusted) →
//! [`process`] (a game process: launched with a nonce, heard only when it answers with it,
//! every wait bounded by a timeout, killed when dropped) → [`pool`] (N processes playing
//! episodes in parallel, restarted and retried after a fault, results in the order asked; [`shelf`]
//! lends processes to threads that play one episode at a time) →
//! [`tree`] (Monster Carlo's prefix-tree UCT over any [`tree::Episodes`]); [`local`] plays a
//! WGDL game as a client would, so the same search runs on both.

pub mod config;
pub mod local;
pub mod pool;
pub mod process;
pub mod protocol;
pub mod shelf;
pub mod tree;
