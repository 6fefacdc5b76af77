//! Playtests of a game of two or more sides (`players a b`: Othello, Hex, Pig): there is no one
//! score to search, so each condition plays itself. A replicate is one game from the start in
//! which every side is the condition's search — the same settings, `rollouts` MCTS iterations per
//! move over the game's encoding, reward 1 for a win of the side to move (the tournament's
//! [`WinEval`]), the child with the best mean played — with the game's chance fixed by the
//! replicate's seed and the searches' random stream by (seed, replicate, condition), so any
//! number of threads, any order and any resume play the same games. What a designer reads off
//! it: how often each side wins (the first mover's advantage), how often nobody does, and how
//! long a game lasts, per search, style and variant.
//!
//! Outputs beside the one-player ones' checkpoint (`runs/`): `games.csv` (one row per game:
//! result, length, each side's return), `rates.csv` and `summary.md` (each side's win rate with
//! a Wilson 95% interval, the draw rate, the mean length), `replays/<condition>.json` (the first
//! game of each condition, for `playforge replay` and the report's viewer) and `timing.csv`.

use super::encode::{EMove, Encoded};
use super::setup::{Condition, Outcome, Play, Played, Replicate, Setup, fmt_num};
use crate::game::{Game, Status, WgdlGame};
use crate::players::Replay;
use crate::players::agents::WinEval;
use crate::report::stats::{summary, wilson};
use crate::report::{csv_bytes, write_atomic};
use crate::rng;
use crate::search::mcts::{self, Evaluator, FinalChoice};
use crate::wgdl::State;
use anyhow::{Result, anyhow};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The win of the side to move as the reward, through the encoding.
struct Wins<'a>(WinEval<'a>);

impl Evaluator<super::encode::EState<State>> for Wins<'_> {
    fn value(&self, s: &super::encode::EState<State>, player: usize) -> f64 {
        self.0.value(&s.st, player)
    }
}

/// The name of how a game ended.
fn result_name(sides: &[String], status: Status) -> String {
    match status {
        Status::Won(k) => sides.get(k as usize).cloned().unwrap_or_else(|| format!("side {k}")),
        Status::Draw => "draw".into(),
        Status::TurnLimit => "turn limit".into(),
        Status::StepLimit => "step limit".into(),
        Status::Stuck => "stuck".into(),
        Status::Finished => "finished".into(),
        Status::Running => "cut".into(),
    }
}

/// Plays replicate `r` of condition `c`: one self-play game. `None` when interrupted.
pub(super) fn play_replicate(setup: &Setup, c: &Condition, r: u64, progress: &AtomicU64) -> Result<Option<Replicate>> {
    let Play::Wgdl { game, mcts, .. } = &c.play else { anyhow::bail!("{}: self-play needs a WGDL game", c.name) };
    let t0 = Instant::now();
    let s = &setup.cfg.playtest;
    let game_seed = setup.game_seed(r);
    let mut game: Encoded<WgdlGame> = game.clone();
    game.game.seed = game_seed;
    let program = game.game.program.clone();
    let fail = |e: crate::wgdl::RuntimeError| anyhow!("{} replicate {}: {}", c.name, r + 1, e.render(&program));
    let eval = Wins(WinEval(&game.game));
    let mut rng = rng::stream(s.seed, 1, r, c.stream);
    let mut st = game.initial().map_err(fail)?;
    let mut legal = Vec::new();
    let mut trace = Vec::new();
    let (mut rollouts, mut searched) = (0u64, 0usize);
    let status = loop {
        if crate::drive::stop::requested() {
            return Ok(None);
        }
        game.legal(&st, &mut legal).map_err(fail)?;
        let status = game.status(&st, &legal);
        if status != Status::Running || trace.len() >= s.max_playout_moves as usize {
            break status;
        }
        // One legal move needs no search (Othello's pass); else the condition's search decides,
        // a kind first and then its move under the factored encoding.
        let m = if legal.len() == 1 {
            legal[0]
        } else {
            rollouts += s.rollouts;
            searched += 1;
            mcts::decide_with(&game, &st, mcts, &eval, s.rollouts, &mut rng, FinalChoice::BestMean).map_err(fail)?.0
        };
        if let EMove::Move(a) = m {
            trace.push(program.action_name(&st.st, a));
        }
        game.apply(&mut st, m).map_err(fail)?;
    };
    progress.fetch_add(s.rollouts, Ordering::Relaxed);
    let sides = &setup.sides;
    let winner = match status {
        Status::Won(k) if (k as usize) < sides.len() => Some(k as usize),
        _ => None,
    };
    let returns = (0..sides.len()).map(|i| winner.map_or(0.0, |w| if w == i { 1.0 } else { -1.0 })).collect();
    let played = Played { winner, result: result_name(sides, status), moves: trace.len() as u32, returns };
    Ok(Some(Replicate {
        key: setup.key.clone(),
        condition: c.name.clone(),
        replicate: r,
        game_seed,
        best: 0.0,
        improvements: Vec::new(),
        rollouts,
        exhausted: false,
        nodes: searched,
        seconds: t0.elapsed().as_secs_f64(),
        trace,
        game: Some(played),
        failures: Vec::new(),
    }))
}

/// Checks a self-play replicate read back: its condition and chance seed, a game whose winner,
/// result, returns and length agree with each other and with its trace.
pub(super) fn validate(rep: &Replicate, path: &Path, setup: &Setup, c: &Condition) -> Result<()> {
    let bad = |what: String| anyhow!(crate::report::run_dir::bad_checkpoint(path, &what));
    if rep.condition != c.name {
        return Err(bad(format!("condition = \"{}\"; expected \"{}\"", rep.condition, c.name)));
    }
    let seed = setup.game_seed(rep.replicate);
    if rep.game_seed != seed {
        return Err(bad(format!("game_seed = {}; expected {seed} (the replicate's)", rep.game_seed)));
    }
    let Some(g) = &rep.game else { return Err(bad("no `game`; expected the self-play game's result".into())) };
    let sides = &setup.sides;
    if g.moves as usize != rep.trace.len() {
        return Err(bad(format!("game.moves = {}; expected {} (the trace's length)", g.moves, rep.trace.len())));
    }
    if let Some(w) = g.winner
        && (w >= sides.len() || g.result != sides[w])
    {
        return Err(bad(format!("game.winner = {w}, result \"{}\"; expected a side of {}", g.result, sides.join(", "))));
    }
    let want: Vec<f64> = (0..sides.len()).map(|i| g.winner.map_or(0.0, |w| if w == i { 1.0 } else { -1.0 })).collect();
    if g.returns != want {
        return Err(bad(format!("game.returns = {:?}; expected {want:?} (+1 for the winner, −1 for the others)", g.returns)));
    }
    Ok(())
}

/// One condition's games, counted.
struct Rates {
    n: u64,
    wins: Vec<u64>,
    draws: u64,
    length: crate::report::stats::Summary,
}

fn rates(sides: &[String], reps: &[Replicate]) -> Rates {
    let mut wins = vec![0u64; sides.len()];
    let mut lengths = Vec::new();
    for g in reps.iter().filter_map(|r| r.game.as_ref()) {
        if let Some(w) = g.winner {
            wins[w] += 1;
        }
        lengths.push(g.moves as f64);
    }
    let n = lengths.len() as u64;
    Rates { n, draws: n - wins.iter().sum::<u64>(), wins, length: summary(&lengths) }
}

fn rate(k: u64, n: u64) -> f64 {
    if n == 0 { 0.0 } else { k as f64 / n as f64 }
}

/// Writes games.csv, rates.csv, timing.csv, replays/ and summary.md; returns the summary.
pub(super) fn write_reports(setup: &Setup, out: &Outcome) -> Result<String> {
    let s = &setup.cfg.playtest;
    let dir = &setup.out_dir;
    let sides = &setup.sides;
    let mut game_rows = Vec::new();
    let mut timing_rows = Vec::new();
    let mut rate_rows = Vec::new();
    let mut table = String::new();
    for (c, reps) in setup.conditions.iter().zip(&out.reps) {
        for r in reps {
            let Some(g) = &r.game else { continue };
            let mut row =
                vec![c.name.clone(), (r.replicate + 1).to_string(), r.game_seed.to_string(), g.result.clone(), g.moves.to_string()];
            row.extend(g.returns.iter().map(|&x| fmt_num(x)));
            game_rows.push(row);
            timing_rows.push(vec![c.name.clone(), (r.replicate + 1).to_string(), format!("{:.2}", r.seconds)]);
        }
        let t = rates(sides, reps);
        let mut row = vec![c.name.clone(), t.n.to_string()];
        let _ = write!(table, "| {} | {} |", c.name, t.n);
        for &k in &t.wins {
            let (lo, hi) = wilson(k, t.n);
            row.extend([k.to_string(), format!("{:.4}", rate(k, t.n)), format!("{lo:.4}"), format!("{hi:.4}")]);
            let _ = write!(table, " {:.3} [{lo:.3}, {hi:.3}] |", rate(k, t.n));
        }
        row.extend([
            t.draws.to_string(),
            format!("{:.4}", rate(t.draws, t.n)),
            format!("{:.2}", t.length.mean),
            format!("{:.2}", t.length.sd),
        ]);
        let _ = writeln!(table, " {:.3} | {:.1} ({:.1}) |", rate(t.draws, t.n), t.length.mean, t.length.sd);
        rate_rows.push(row);
        // The first game of the condition, for `playforge replay` and the report's viewer.
        if let Some(first) = reps.iter().min_by_key(|r| r.replicate)
            && let Some(g) = &first.game
        {
            let replay = Replay {
                game: crate::report::run_dir::game_path(&setup.game_path),
                turn_order: None,
                params: c.params.clone(),
                players: sides.iter().map(|side| format!("{} ({side})", c.name)).collect(),
                moves: first.trace.clone(),
                result: g.result.clone(),
                chance_seed: first.game_seed,
                overlays: c.overlays.clone(),
            };
            let path = dir.join("replays").join(format!("{}.json", c.file));
            write_atomic(&path, serde_json::to_string_pretty(&replay)?.as_bytes())?;
        }
    }
    let mut header: Vec<String> = ["condition", "replicate", "game_seed", "result", "moves"].map(String::from).to_vec();
    header.extend(sides.iter().map(|side| format!("return_{side}")));
    write_atomic(&dir.join("games.csv"), &csv_bytes(&header, &game_rows))?;
    let mut header = vec!["condition".to_string(), "games".to_string()];
    for side in sides {
        header.extend([format!("{side}_wins"), format!("{side}_rate"), format!("{side}_low"), format!("{side}_high")]);
    }
    header.extend(["draws", "draw_rate", "mean_moves", "sd_moves"].map(String::from));
    write_atomic(&dir.join("rates.csv"), &csv_bytes(&header, &rate_rows))?;
    // The wall clock apart: the other files are the same on every rerun and resume; this is not.
    write_atomic(&dir.join("timing.csv"), &csv_bytes(&["condition", "replicate", "seconds"].map(String::from), &timing_rows))?;
    let first = setup.conditions.first().and_then(|c| match &c.play {
        Play::Wgdl { game, .. } => game.game.initial().ok().map(|st| game.game.to_move(&st)),
        Play::External { .. } => None,
    });
    let mut md = format!(
        "# Playtest `{}`\n\nGame `{}`, sides {}; each condition plays itself (the same search on every side): {} games × {} rollouts per move; seed {}; chance seed {}.{}\n\n",
        s.name,
        setup.game_path.display(),
        sides.join(", "),
        s.replicates,
        s.rollouts,
        s.seed,
        if s.game_seed == "shared" { "shared by every game" } else { "one per game, the same in every condition" },
        first.and_then(|k| sides.get(k)).map(|side| format!(" {side} moves first.")).unwrap_or_default()
    );
    md.push_str("| condition | games |");
    for side in sides {
        let _ = write!(md, " {side} wins (95% CI) |");
    }
    md.push_str(" draws | mean length (sd) |\n|---|---:|");
    md.push_str(&"---:|".repeat(sides.len() + 2));
    md.push('\n');
    md.push_str(&table);
    md.push_str(
        "\nA win rate is the share of games that side won, with its Wilson 95% interval; draws are the games nobody won (a draw, a limit, or a game cut at `max_playout_moves`); the rates and the draws add up to 1. Length: moves played.\n\n## Conditions\n\n",
    );
    for c in &setup.conditions {
        let _ = writeln!(md, "- **{}**: {}", c.name, c.describe);
    }
    md.push_str("\nFiles: games.csv (one row per game: result, moves, each side's return), rates.csv (the table above), replays/<condition>.json (the first game of each condition: `playforge replay`), runs/ (one file per game: the checkpoint).\n");
    write_atomic(&dir.join("summary.md"), md.as_bytes())?;
    Ok(md)
}
