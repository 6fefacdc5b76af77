//! Helpers shared by the integration tests.

use playforge::wgdl::{self, Action, Compiled, Diagnostics, Program, State};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

/// Every legal move in `st`.
#[allow(dead_code)]
pub fn legal(p: &Program, st: &State) -> Vec<Action> {
    let mut out = Vec::new();
    p.legal_actions(st, &mut out).expect("legal actions");
    out
}

/// The legal moves as [`Program::action_name`] writes them.
#[allow(dead_code)]
pub fn names(p: &Program, st: &State) -> Vec<String> {
    legal(p, st).into_iter().map(|a| p.action_name(st, a)).collect()
}

/// Applies the legal move called `name`, panicking (with the legal moves) if there is none.
#[allow(dead_code)]
pub fn play(p: &Program, st: &mut State, name: &str) {
    let moves = legal(p, st);
    let a = *moves
        .iter()
        .find(|&&a| p.action_name(st, a) == name)
        .unwrap_or_else(|| panic!("`{name}` is not legal; legal: {:?}", names(p, st)));
    p.apply(st, a).unwrap_or_else(|e| panic!("{}", e.render(p)));
}

/// Plays up to `moves` uniformly random legal moves from the start (stream `seed`); the first
/// runtime error, if any.
#[allow(dead_code)]
pub fn random_moves(p: &Program, seed: u64, moves: usize) -> Result<(), wgdl::RuntimeError> {
    use rand::RngExt;
    let mut r = playforge::rng::stream(seed, 1, 0, 0);
    let mut st = p.initial_state()?;
    let mut legal = Vec::new();
    for _ in 0..moves {
        p.legal_actions(&st, &mut legal)?;
        if legal.is_empty() {
            break;
        }
        p.apply(&mut st, legal[r.random_range(0..legal.len())])?;
    }
    Ok(())
}

/// Every output file under `dir` (relative path → bytes), bookkeeping left out (timing,
/// the executor's summary, checkpoints, locks, temporary files): what must be byte-identical between two runs.
#[allow(dead_code)]
pub fn outputs(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                walk(base, &p, out);
            } else if !matches!(name.as_str(), "timing.csv" | "executor.txt" | "checkpoint.json" | ".lock" | ".playforge")
                && !name.ends_with(".seconds")
                && !name.contains(".tmp")
            {
                out.insert(p.strip_prefix(base).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Tests that hold answers to a wall clock run apart from the tests that load every core (the
/// CLI runs of `tier_outputs` and `golden_runs`, two or more processes of all threads each):
/// those take [`all_cores`] (many at once), these [`wall_clock`] (alone with respect to them).
static CORES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test that runs processes using every core.
#[allow(dead_code)]
pub fn all_cores() -> std::sync::RwLockReadGuard<'static, ()> {
    CORES.read().unwrap_or_else(|p| p.into_inner())
}

/// Held by a test that measures answers against a wall clock.
#[allow(dead_code)]
pub fn wall_clock() -> std::sync::RwLockWriteGuard<'static, ()> {
    CORES.write().unwrap_or_else(|p| p.into_inner())
}

/// The standard output of a CLI run with the wall clock printed in it masked (golden_runs,
/// tier_outputs), each where it is printed:
/// - `…, 6772 games, 5.4 s` (balance, generate: cli/balance.rs, cli/generate.rs): the run's
///   duration;
/// - `122 games in 1.9 s; outputs in` (personas) and `search: 500 iterations in 0.10 s
///   (4898/s)` (play: cli/experiment.rs): durations and a rate;
/// - `1.0 s; outputs in` (playtest: cli/playtest.rs), a line of its own;
/// - the `iterations/s` column of an experiment's table (experiment/repeat.rs).
#[allow(dead_code)]
pub fn mask_wall_clock(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // The `iterations/s` column of the Markdown table being read.
    let mut rate_column = None;
    for line in s.lines() {
        let mut line = line.to_string();
        if line.starts_with('|') {
            let cells: Vec<&str> = line.split('|').collect();
            if let Some(i) = cells.iter().position(|c| c.trim() == "iterations/s") {
                rate_column = Some(i);
            } else if let Some(i) = rate_column.filter(|&i| i < cells.len() && !cells[i].starts_with("--")) {
                let mut cells: Vec<String> = cells.into_iter().map(String::from).collect();
                cells[i] = " <wall clock> ".into();
                line = cells.join("|");
            }
        } else {
            rate_column = None;
        }
        for (before, after) in [("games, ", " s"), (" in ", " s"), ("(", "/s)"), ("", " s; outputs in ")] {
            line = mask_between(&line, before, after);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Masks each number (digits and `.`) that follows `before` and is followed by `after`.
fn mask_between(line: &str, before: &str, after: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    if before.is_empty() {
        if let Some((n, tail)) = line.split_once(after)
            && n.parse::<f64>().is_ok()
        {
            return format!("<wall clock>{after}{tail}");
        }
        return line.to_string();
    }
    while let Some(i) = rest.find(before) {
        let tail = &rest[i + before.len()..];
        let n = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.').len();
        out.push_str(&rest[..i + before.len()]);
        if n > 0 && tail[n..].starts_with(after) {
            out.push_str("<wall clock>");
            rest = &tail[n..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}
