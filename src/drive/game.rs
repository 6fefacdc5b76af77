//! The context every job kind sends its workers, and the one game hash.
//!
//! One hash rule ([`game_hash`]): the game's text and its compiled hex map, so that a checkpoint
//! (through its key) and a job (through its context) belong to the game as compiled — a changed
//! `.wgdl` or a changed map is refused on resume by balance, generate and personas, and a worker
//! that reads another version of either refuses the driver's jobs. Every job kind's context is a
//! [`Context`] (playtest's adds the key its records carry). [`Source`] is a game read once: its
//! text, compiled program and hash, for a driver or worker that needs all three.

use crate::wgdl::{CompileOptions, Program};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

    /// The context of a driver that locates nothing in its config once it is loaded (a
    /// tournament): no config path or text.
    pub fn bare(config: C, game_hash: u64) -> Context<C> {
        Context { config, config_path: PathBuf::new(), config_text: String::new(), game_hash }
    }

    /// A worker's check that the game it compiled (`text` at `path` with `program`'s map) is the
    /// one the driver compiled.
    pub fn same_game(&self, path: &Path, text: &str, program: &Program) -> Result<()> {
        crate::exec::same_game(path, game_hash(text, program), self.game_hash)
    }
}

/// A game read once: its path, its text, the program compiled from that text and the hash of
/// both ([`game_hash`]).
pub struct Source {
    pub path: PathBuf,
    pub text: String,
    pub program: Arc<Program>,
    pub hash: u64,
}

impl Source {
    /// Reads and compiles `path` with `options` (their `base_dir` the file's folder unless
    /// given).
    pub fn load(path: &Path, options: &CompileOptions) -> Result<Source> {
        let text = crate::input::read_text(path)?;
        let mut options = options.clone();
        if options.base_dir.is_none() {
            options.base_dir = path.parent().map(Path::to_path_buf);
        }
        let program = crate::wgdl::compile_str_with(&path.display().to_string(), &text, &options).map_err(|e| anyhow!("{e}"))?.program;
        let hash = game_hash(&text, &program);
        Ok(Source { path: path.to_path_buf(), text, program, hash })
    }
}
