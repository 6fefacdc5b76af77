//! A recorded game ([`Replay`]) played again into pictures: the start and the state after every
//! move, each drawn by `view`, for the report's replay viewer and the web app. A replay names its
//! game by its absolute path (older versions: the path it was run with, relative to where the
//! run started); [`find_game`] looks for it as written and then from each folder above the
//! replay, so that a report can be written from anywhere. A move that is not legal where it was recorded stops the replay with a
//! message, never a panic. A GDL match record (`gdl-match`'s `match-N.moves`: one joint move a
//! line) is drawn the same way from its game's facts ([`gdl_frames`]).

use crate::game::{Game, WgdlGame};
use crate::players::ai::Replay;
use crate::wgdl::Program;
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// At most this many moves of one replay are drawn (a report stays a few megabytes).
pub const MAX_FRAMES: usize = 400;

/// A replay's pictures: `svgs[0]` the start, `svgs[k]` after move `k`.
#[derive(Clone, Debug)]
pub struct Frames {
    pub title: String,
    pub players: Vec<String>,
    pub moves: Vec<String>,
    pub svgs: Vec<String>,
    pub result: String,
    /// Why the pictures stop early, if they do.
    pub note: Option<String>,
}

/// The game file a replay names: as written (absolute, as this version writes it, or from the
/// working folder, as older ones did), else from `near` and each folder above it
/// ([`crate::report::run_dir::find_named`]).
pub fn find_game(game: &Path, near: &Path) -> Option<PathBuf> {
    crate::report::run_dir::find_named(game, near)
}

/// The program a replay was played on: its game with its parameters, turn order and overlays.
pub fn program_of(rep: &Replay, near: &Path) -> Result<Arc<Program>> {
    let Some(path) = find_game(&rep.game, near) else {
        bail!("the game {} named by the replay was not found (from here or above {})", rep.game.display(), near.display());
    };
    rep.program(&path)
}

/// Plays `rep` again and draws every state (the first [`MAX_FRAMES`] moves).
pub fn frames(rep: &Replay, near: &Path, title: &str) -> Result<Frames> {
    let program = program_of(rep, near)?;
    let game = WgdlGame::new(program.clone()).with_seed(rep.chance_seed);
    let render = |e: crate::wgdl::RuntimeError| anyhow!("{}", e.render(&program));
    let mut st = game.initial().map_err(render)?;
    let mut legal = Vec::new();
    let mut svgs = vec![crate::view::render_svg(&program, &st, &format!("{title} — start"))];
    let mut moves = Vec::new();
    let mut note = None;
    for (i, name) in rep.moves.iter().enumerate() {
        if i >= MAX_FRAMES {
            note = Some(format!("the first {MAX_FRAMES} of {} moves are drawn", rep.moves.len()));
            break;
        }
        game.legal(&st, &mut legal).map_err(render)?;
        let Some(&m) = legal.iter().find(|&&m| program.action_name(&st, m) == *name) else {
            note = Some(format!("move {} `{name}` is not legal here: the replay does not match the game", i + 1));
            break;
        };
        game.apply(&mut st, m).map_err(render)?;
        moves.push(name.clone());
        svgs.push(crate::view::render_svg(&program, &st, &format!("{title} — after move {}: {name}", i + 1)));
    }
    Ok(Frames { title: title.to_string(), players: rep.players.clone(), moves, svgs, result: rep.result.clone(), note })
}

/// A GDL match record played again on `game` (a `.kif` file) and drawn state by state.
pub fn gdl_frames(game: &Path, record: &str, title: &str) -> Result<Frames> {
    use crate::game::Game;
    let g = crate::gdl::load(game)?;
    let mut st = g.initial().map_err(|e| anyhow!("{e}"))?;
    let mut legal = Vec::new();
    let mut svgs = vec![crate::view::svg::svg(&g.scene(&st, &format!("{title} — start"), 0))];
    let (mut moves, mut note, mut result) = (Vec::new(), None, String::new());
    for line in record.lines() {
        let t = line.trim();
        if let Some(r) = t.strip_prefix("goals:").or_else(|| t.strip_prefix("aborted:")) {
            result = r.trim().to_string();
            continue;
        }
        // `   3  (mark 1 2) noop`: the step number, then the joint move.
        let Some((step, text)) = t.split_once(char::is_whitespace) else { continue };
        if step.parse::<u64>().is_err() {
            continue;
        }
        let text = text.trim();
        if moves.len() >= MAX_FRAMES {
            note = Some(format!("the first {MAX_FRAMES} joint moves are drawn"));
            break;
        }
        g.legal(&st, &mut legal).map_err(|e| anyhow!("{e}"))?;
        let Some(&m) = legal.iter().find(|&&m| g.show_move(m) == text) else {
            note = Some(format!("joint move {} `{text}` is not legal here: the record does not match the game", moves.len() + 1));
            break;
        };
        g.apply(&mut st, m).map_err(|e| anyhow!("{e}"))?;
        moves.push(text.to_string());
        svgs.push(crate::view::svg::svg(&g.scene(&st, &format!("{title} — after {}: {text}", moves.len()), moves.len() as u32)));
    }
    let players = (0..g.roles()).map(|r| g.role_name(r)).collect();
    Ok(Frames { title: title.to_string(), players, moves, svgs, result, note })
}
