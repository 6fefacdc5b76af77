//! How a game is compiled ([`CompileOptions`]): where its auxiliary files are, parameter
//! overrides, the turn order and the overlays switched on. Plain data, below the compiled
//! [`crate::wgdl::program::Program`], which keeps the options it was compiled with (to compile
//! again when a parameter sizes a grid).

use std::path::PathBuf;

/// How to compile: where a game's auxiliary files (hex maps) are, and parameter overrides.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The directory that `hexmap "…"` paths are relative to (the game file's directory).
    pub base_dir: Option<PathBuf>,
    /// `description.attribute` = value, replacing the file's value of a declared parameter.
    pub overrides: Vec<(String, f64)>,
    /// `grouped` or `alternating`, replacing the file's `turnOrder`.
    pub turn_order: Option<String>,
    /// Named overlays (`style`/`variant` line tags) to switch on; every other tagged line is
    /// left out (games/README.md §9.16).
    pub overlays: Vec<String>,
}
