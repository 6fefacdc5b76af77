//! The players: how a side of a game chooses its moves. [`agents`] holds the deciders (random,
//! a WGDL policy, MCTS one move at a time); [`ai`] the `[[ai]]` tables that name them, their
//! resolution against a compiled game, and a game played out between two of them; [`persona`]
//! one game played as a procedural persona (a selection formula and a measure to maximize or
//! minimize). Below every
//! driver that pits them against each other: the tournament, balance (fitness, verification),
//! the personas, the generator and the Python package's `Bot`.

pub mod agents;
pub mod ai;
pub mod persona;

pub use ai::{AiConfig, Player, Replay, play_out, resolve};
