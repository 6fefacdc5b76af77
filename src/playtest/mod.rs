//! Playtest experiments (Keehl 2018, "Monster Carlo"): play styles × design variants ×
//! replicates of one MCTS search over a whole WGDL game, compared by the highest score seen.
//! [`config`] reads the TOML, [`encode`] offers the moves flat or factored, [`run`] runs the
//! replicates (each file a checkpoint) and writes the curves, the significance table, the
//! two-panel chart and the best traces. On a game of two or more sides, [`selfplay`] plays each
//! search against itself instead and reports each side's win rate, the draws and the length.

pub mod config;
pub mod encode;
pub mod external;
pub mod jobs;
pub mod run;
pub mod selfplay;
pub mod setup;
