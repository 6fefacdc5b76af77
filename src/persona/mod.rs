//! Procedural personas (Mugrai et al. 2019): genetic programming over the MCTS selection
//! formula, so that an MCTS player maximizes or minimizes a measure of any WGDL game — score,
//! legal moves, any game value. [`config`] reads the TOML, [`play`] (in
//! [`crate::players::persona`]) plays one game as a persona, a vanilla MCTS or a random player,
//! and [`run`] evolves each persona generation by generation with checkpoints, charts and a
//! held-out comparison; on a game in its own process [`external`] plays instead, the formula
//! driving Monster Carlo's prefix tree.

pub mod asktell;
pub mod config;
pub mod external;
pub mod jobs;
/// Playing one game as a persona: it lives with the other players ([`crate::players::persona`]),
/// where every driver can reach it; this name keeps the old paths working.
pub use crate::players::persona as play;
pub mod humans;
pub mod run;
