//! The context every job kind sends its workers, and the one game hash.
//!
//! One hash rule ([`game_hash`]): the game's text and its compiled hex map, so that a checkpoint
//! (through its key) and a job (through its context) belong to the game as compiled — a changed
//! `.wgdl` or a changed map is refused on resume by balance, generate and personas, and a worker
//! that reads another version of either refuses the driver's jobs. (Playtest and tournament
//! still name their game by the hash of its text alone.)

use crate::wgdl::Program;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A hash of a game's text and its compiled map (FNV-1a over both): what a checkpoint and a job
/// belong to.
pub fn game_hash(text: &str, program: &Program) -> u64 {
    crate::genes::game_hash(text, program)
}

/// What every job of a run shares, sent once per batch: the resolved config `C` (its paths
/// absolute), the config file's path and text (for error positions only), and the hash of the
/// game the driver compiled.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Context<C> {
    pub config: C,
    pub config_path: PathBuf,
    pub config_text: String,
    pub game_hash: u64,
}

impl<C> Context<C> {
    /// The context of a run of `config` (its paths made absolute by the caller) read from
    /// `config_path` (made absolute here). Each driver names its context (`BalanceContext` =
    /// `Context<BalanceConfig>`) and adds a constructor from its own setup.
    pub fn of(config: C, config_path: &Path, config_text: &str, game_hash: u64) -> Result<Context<C>> {
        Ok(Context { config, config_path: std::path::absolute(config_path)?, config_text: config_text.to_string(), game_hash })
    }

    /// A worker's check that the game it compiled (`text` at `path` with `program`'s map) is the
    /// one the driver compiled.
    pub fn same_game(&self, path: &Path, text: &str, program: &Program) -> Result<()> {
        crate::exec::same_game(path, game_hash(text, program), self.game_hash)
    }
}
