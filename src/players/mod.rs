//! The players: how a side of a game chooses its moves. [`agents`] holds the deciders (random,
//! a WGDL policy, MCTS one move at a time); [`ai`] the `[[ai]]` tables that name them, their
//! resolution against a compiled game, and a game played out between two of them. Below every
//! driver that pits them against each other: the tournament, balance (fitness, verification)
//! and the Python package's `Bot`.

pub mod agents;
pub mod ai;

pub use ai::{AiConfig, Player, Replay, play_out, resolve};
