//! WGDL: the game description language and its one interpreter.
//!
//! The pipeline, in three rooms. The [`front`] end: [`lexer`] (text → tokens) → [`parser`]
//! (tokens → [`ast`] with spans), with [`diag`] and [`lint`] (warnings: goals and conditions that
//! can never hold, precedence traps). The compiler, [`compile`], one file per pass (names resolved
//! once, types checked, expressions lowered to bytecode). The [`run`] time: [`Program`] +
//! [`State`], the closures the bytecode is lowered to, and the built-ins for hex maps, tile grids
//! and turns. The front end's and the run time's public modules are re-exported here
//! (`wgdl::parser`, `wgdl::program`, …). Every stage reports problems as [`Diagnostic`]s and
//! keeps going; nothing here does I/O except [`load`], and nothing here knows any particular
//! game.

pub mod compile;
pub mod front;
pub mod run;

pub use front::{ast, diag, lexer, lint, parser};
pub(in crate::wgdl) use run::cells;
pub use run::{board, hex, probe, program};
use run::{fast, parts};

pub use compile::CompileOptions;
pub use diag::MAX_SHOWN;
pub use diag::{DiagKind, Diagnostic, Diagnostics, Severity, SourceFile, Span};
pub use parts::Dirty;
pub use program::{Action, ActionKind, Program, RtKind, RuntimeError, State, Status, Ty};
#[cfg(feature = "compiled")]
pub use run::jit::{generated as compiled_functions, set_min_nodes as set_compiled_min_nodes};
pub use run::program::closures::Tier;

use std::path::Path;
use std::sync::Arc;

/// A compiled game and the warnings found while compiling it.
pub struct Compiled {
    pub program: Arc<Program>,
    pub warnings: Diagnostics,
}

/// Compiles WGDL source text. `name` is used in messages (usually the file path).
pub fn compile_str(name: &str, text: &str) -> Result<Compiled, Diagnostics> {
    compile_str_with(name, text, &CompileOptions::default())
}

/// [`compile_str`] with options (map directory, parameter overrides, turn order).
pub fn compile_str_with(name: &str, text: &str, opts: &CompileOptions) -> Result<Compiled, Diagnostics> {
    let file = Arc::new(SourceFile::new(name, text));
    let mut diags = Vec::new();
    // Each stage keeps at most `diag::MAX_SHOWN` errors and warnings and counts the rest.
    let mut cap = diag::Cap::default();
    let tokens = lexer::lex_capped(&file.text, &mut diags, &mut cap);
    let ast = parser::parse_capped(&tokens, &mut diags, &mut cap);
    drop(tokens);
    let (ast, overlays) = select_overlays(ast, &opts.overlays, &mut diags);
    lint::precedence_traps(&ast, &file, &mut diags);
    cap.sync(&diags);
    let program = compile::compile_capped(&ast, file.clone(), &mut diags, opts, &mut cap).map(|mut p| {
        p.overlays = overlays;
        p.selected = opts.overlays.clone();
        p
    });
    if let Some(p) = &program {
        lint::lint(&ast, p, &mut diags);
    }
    let report = Diagnostics::new((*file).clone(), diags, &cap);
    match program {
        Some(p) if !report.has_errors() => Ok(Compiled { program: Arc::new(p), warnings: report }),
        _ => Err(report),
    }
}

/// Keeps the untagged lines and the lines of the selected overlays (`style <name>:`,
/// `variant <name>:`; a `not` tag inverts), and lists every overlay the file declares. A selected
/// name the file does not declare is an error at the start of the file that lists the names.
fn select_overlays(file: ast::File, selected: &[String], diags: &mut Vec<Diagnostic>) -> (ast::File, Vec<(ast::OverlayKind, String)>) {
    let mut declared: Vec<(ast::OverlayKind, String)> = Vec::new();
    for d in &file.decls {
        if let Some(o) = &d.overlay
            && !declared.iter().any(|(_, n)| *n == o.name.name)
        {
            declared.push((o.kind, o.name.name.clone()));
        }
    }
    for name in selected {
        if !declared.iter().any(|(_, n)| n == name) {
            let known = if declared.is_empty() {
                "a name from a `style <name>:` or `variant <name>:` line; this file declares none".to_string()
            } else {
                let names: Vec<String> = declared.iter().map(|(k, n)| format!("{} {n}", k.word())).collect();
                format!("one of: {}", names.join(", "))
            };
            diags.push(Diagnostic::error(
                Span::new(0, 0),
                DiagKind::UnknownName { what: "style or variant", name: name.clone(), expected: known },
            ));
        }
    }
    let decls = file
        .decls
        .into_iter()
        .filter(|d| match &d.overlay {
            None => true,
            Some(o) => selected.contains(&o.name.name) != o.negated,
        })
        .collect();
    (ast::File { decls }, declared)
}

/// Errors from [`load`]: the file could not be read, or it does not compile.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error("{0}")]
    Compile(Diagnostics),
}

/// Reads and compiles a `.wgdl` file.
pub fn load(path: &Path) -> Result<Compiled, LoadError> {
    load_with(path, &CompileOptions::default())
}

/// [`load`] with options; maps are found relative to the file unless `opts` says otherwise.
pub fn load_with(path: &Path, opts: &CompileOptions) -> Result<Compiled, LoadError> {
    let text = crate::input::read_text(path)?;
    let mut opts = opts.clone();
    if opts.base_dir.is_none() {
        opts.base_dir = path.parent().map(|p| p.to_path_buf());
    }
    compile_str_with(&path.display().to_string(), &text, &opts).map_err(LoadError::Compile)
}
