//! Games that run in their own process (issue 58): the bridge protocol of docs/bridge.md from
//! playforge's side. A game process, in any language, connects back, introduces itself
//! (`hello`), and plays episodes: playforge sends a seed, the settings and a prefix of choices;
//! the game replays the prefix, plays on by its default policy and reports its score, its
//! measures and the whole trace (`outcome`).
//!
//! One file per concern: [`protocol`] (the messages, parsed and checked, never trusted) →
//! [`process`] (a game process: launched with a nonce, heard only when it answers with it,
//! every wait bounded by a timeout, killed when dropped). The searches over it (the prefix-tree
//! search, playtest and generate on an external game) are not built yet.

pub mod process;
pub mod protocol;
