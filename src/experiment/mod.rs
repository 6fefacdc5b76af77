//! Experiments over WGDL games, configured in TOML: `play` (one search, its best path replayed
//! and reported) and `experiment` (play configurations repeated over seeds, compared with
//! confidence intervals and Welch t-tests). Experiments know searchers and result formulas,
//! never the inside of a game.

pub mod config;
pub mod play;
pub mod repeat;
pub mod tournament;
