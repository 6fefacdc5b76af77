//! Helpers shared by the integration tests.

use playforge::wgdl::{self, Compiled, Diagnostics};
use std::path::Path;

/// Compiles WGDL text, panicking with the rendered diagnostics on failure.
#[allow(dead_code)]
pub fn compile(src: &str) -> Compiled {
    wgdl::compile_str("test.wgdl", src).unwrap_or_else(|d| panic!("{d}"))
}

/// Compiles WGDL text that must fail, returning the diagnostics.
#[allow(dead_code)]
pub fn compile_err(src: &str) -> Diagnostics {
    match wgdl::compile_str("test.wgdl", src) {
        Ok(_) => panic!("expected errors, but it compiled:\n{src}"),
        Err(d) => d,
    }
}

/// Loads a shipped game from `games/`.
#[allow(dead_code)]
pub fn game(name: &str) -> Compiled {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("games").join(name);
    wgdl::load(&path).unwrap_or_else(|e| panic!("{e}"))
}
