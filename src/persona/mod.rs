//! Procedural personas (Mugrai et al. 2019): genetic programming over the MCTS selection
//! formula, so that an MCTS player maximizes or minimizes a measure of any WGDL game — score,
//! legal moves, any game value. [`config`] reads the TOML, [`play`] plays one game as a persona,
//! a vanilla MCTS or a random player, and [`run`] evolves each persona generation by generation
//! with checkpoints, charts and a held-out comparison.

pub mod asktell;
pub mod config;
pub mod jobs;
pub mod play;
pub mod run;
