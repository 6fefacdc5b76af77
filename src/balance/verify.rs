//! `playforge verify best_encounter.toml --games N`: plays an encounter afresh with every AI
//! pair of its balance config (seeds the search never used) and reports, per pair, each side's
//! win rate with a 95% Wilson interval, the draws, and the length distribution against the
//! target band (the turns whose length term L ≥ 0.9).

use super::config::BalanceConfig;
use super::fitness::{Evaluator, GameOutcome, target_band};
use super::run::load_encounter;
use crate::drive::game::Source;
use crate::exec::{Executor, JobKind};
use crate::report::stats::wilson;
use crate::report::{csv_bytes, write_atomic};
use crate::rng::derive;
use crate::wgdl::{CompileOptions, Program};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Stream tag of verification games (never used by a search).
const VERIFY: u64 = 0x5645_5249_4659;

pub struct PairReport {
    pub pair: String,
    pub games: u64,
    pub wins: [u64; 2],
    pub draws: u64,
    pub win_ci: [(f64, f64); 2],
    pub mean_turns: f64,
    pub sd_turns: f64,
    pub quantiles: [u32; 5],
    pub in_band: f64,
    pub balance: f64,
}

pub struct Report {
    pub pairs: Vec<PairReport>,
    pub band: Option<(u32, u32)>,
    pub sides: [String; 2],
    pub markdown: String,
    pub dir: PathBuf,
}

/// The game at `game` read once with the encounter's parameter values (its text, program and
/// hash), checked against its constraints.
pub fn encounter_source(game: &Path, overrides: &[(String, f64)], turn_order: &Option<String>) -> Result<Source> {
    let opts = CompileOptions { overrides: overrides.to_vec(), turn_order: turn_order.clone(), ..CompileOptions::default() };
    let source = Source::load(game, &opts)?;
    let program = &source.program;
    let st = program.initial_state().map_err(|e| anyhow!("{}", e.render(program)))?;
    let broken = program.violated_constraints(&st).map_err(|e| anyhow!("{}", e.render(program)))?;
    if !broken.is_empty() {
        return Err(anyhow!("the encounter breaks `constraint {}`; expected a valid encounter", broken[0]));
    }
    Ok(source)
}

/// Verifies `file` with `games` games per AI pair on `exec`; `config` overrides the file's
/// `config`.
pub fn verify(
    file: &Path,
    config: Option<&Path>,
    games: u64,
    seed: u64,
    exec: &Executor,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Report> {
    if games == 0 {
        return Err(anyhow!("--games 0; expected at least 1 game per AI pair"));
    }
    let enc = load_encounter(file)?;
    let cfg_path = config
        .map(Path::to_path_buf)
        .or(enc.config.clone())
        .ok_or_else(|| anyhow!("{}: no `config = \"…\"` naming the balance config; expected one, or pass --config", file.display()))?;
    let (cfg, _) = BalanceConfig::load(&cfg_path)?;
    let source = encounter_source(&enc.game, &enc.overrides, &enc.turn_order).map_err(|e| anyhow!("{}: {e}", file.display()))?;
    let program = source.program.clone();
    let ev = Evaluator::new(&cfg, &program).map_err(|e| anyhow!("{}: {e}", cfg_path.display()))?;
    let jobs: Vec<VerifyJob> =
        (0..ev.n_pairs()).flat_map(|p| (0..games).map(move |g| VerifyJob { pair: p, seed: derive(seed, VERIFY, p as u64, g) })).collect();
    let total = jobs.len() as u64;
    let done = std::sync::atomic::AtomicU64::new(0);
    let context = || -> Result<VerifyContext> {
        let game = std::path::absolute(&enc.game)?;
        let mut config = cfg.clone();
        config.balance.game = game.clone();
        Ok(VerifyContext {
            config,
            config_path: std::path::absolute(&cfg_path)?,
            game,
            overrides: enc.overrides.clone(),
            turn_order: enc.turn_order.clone(),
            game_hash: source.hash,
        })
    };
    let outcomes: Vec<GameOutcome> = exec.map::<VerifyGame>(context, &jobs, |_, j| {
        let o = ev.play(&program, j.pair, j.seed, None);
        progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, total);
        o
    })?;
    if !matches!(exec, Executor::Local) {
        progress(total, total);
    }
    let band = target_band(&cfg.fitness, 0.9);
    let sides = [program.players[0].clone(), program.players[1].clone()];
    let mut pairs = Vec::new();
    for p in 0..ev.n_pairs() {
        let os = &outcomes[p * games as usize..(p + 1) * games as usize];
        let e = ev.score(os, 0.0);
        let n = os.len() as f64;
        let mut turns: Vec<u32> = os.iter().map(|o| o.turns).collect();
        turns.sort_unstable();
        let mean = turns.iter().map(|&t| t as f64).sum::<f64>() / n;
        let sd = (turns.iter().map(|&t| (t as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt();
        let q = |f: f64| turns[((turns.len() - 1) as f64 * f).round() as usize];
        let in_band = band.map_or(0.0, |(a, z)| turns.iter().filter(|&&t| t >= a && t <= z).count() as f64 / n);
        pairs.push(PairReport {
            pair: ev.pair_name(p),
            games,
            wins: e.wins,
            draws: e.draws,
            win_ci: [wilson(e.wins[0], games), wilson(e.wins[1], games)],
            mean_turns: mean,
            sd_turns: sd,
            quantiles: [q(0.0), q(0.1), q(0.5), q(0.9), q(1.0)],
            in_band,
            balance: e.balance,
        });
    }
    let band_text = band.map_or("none".to_string(), |(a, z)| format!("{a}–{z} turns"));
    let mut md = format!(
        "Verification of `{}`: {games} fresh games per AI pair (seed {seed}). Target length band (L ≥ 0.9): {band_text}.\n\n\
         | pair | {} wins (95% CI) | {} wins (95% CI) | draws | mean turns ± sd | min / p10 / median / p90 / max | in band | balance 1 − H |\n\
         |---|---|---|---|---|---|---|---|\n",
        file.display(),
        sides[0],
        sides[1]
    );
    let mut rows = Vec::new();
    for r in &pairs {
        let pct = |k: u64| 100.0 * k as f64 / r.games as f64;
        md.push_str(&format!(
            "| {} | {:.1}% ({:.1}–{:.1}) | {:.1}% ({:.1}–{:.1}) | {} | {:.1} ± {:.1} | {} / {} / {} / {} / {} | {:.0}% | {:.3} |\n",
            r.pair,
            pct(r.wins[0]),
            100.0 * r.win_ci[0].0,
            100.0 * r.win_ci[0].1,
            pct(r.wins[1]),
            100.0 * r.win_ci[1].0,
            100.0 * r.win_ci[1].1,
            r.draws,
            r.mean_turns,
            r.sd_turns,
            r.quantiles[0],
            r.quantiles[1],
            r.quantiles[2],
            r.quantiles[3],
            r.quantiles[4],
            100.0 * r.in_band,
            r.balance
        ));
        rows.push(vec![
            r.pair.clone(),
            r.games.to_string(),
            r.wins[0].to_string(),
            r.wins[1].to_string(),
            r.draws.to_string(),
            format!("{:.4}", r.win_ci[0].0),
            format!("{:.4}", r.win_ci[0].1),
            format!("{:.4}", r.win_ci[1].0),
            format!("{:.4}", r.win_ci[1].1),
            format!("{:.3}", r.mean_turns),
            format!("{:.3}", r.sd_turns),
            format!("{:.4}", r.in_band),
        ]);
    }
    let dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    let header: Vec<String> = [
        "pair",
        "games",
        &format!("{}_wins", sides[0]),
        &format!("{}_wins", sides[1]),
        "draws",
        &format!("{}_ci_low", sides[0]),
        &format!("{}_ci_high", sides[0]),
        &format!("{}_ci_low", sides[1]),
        &format!("{}_ci_high", sides[1]),
        "mean_turns",
        "sd_turns",
        "in_band",
    ]
    .map(|s| s.to_string())
    .to_vec();
    write_atomic(&dir.join("verify.csv"), &csv_bytes(&header, &rows))?;
    write_atomic(&dir.join("verify.md"), md.as_bytes())?;
    Ok(Report { pairs, band, sides, markdown: md, dir })
}

// The job kind `verify.game`: one game of an encounter given as parameter values.

/// What every game of a verification shares: the balance config, and the encounter as
/// parameter values of the game (absolute path) with its hash (text and map, read once).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VerifyContext {
    pub config: BalanceConfig,
    pub config_path: PathBuf,
    pub game: PathBuf,
    pub overrides: Vec<(String, f64)>,
    pub turn_order: Option<String>,
    pub game_hash: u64,
}

/// One verification game: AI pair `pair` on stream `seed`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct VerifyJob {
    pub pair: usize,
    pub seed: u64,
}

/// One verification game (`verify.game`).
pub struct VerifyGame;

impl JobKind for VerifyGame {
    const NAME: &'static str = "verify.game";
    type Context = VerifyContext;
    type Worker = (Arc<Program>, Evaluator);
    type Job = VerifyJob;
    type Output = GameOutcome;

    fn worker(ctx: &VerifyContext) -> Result<Self::Worker> {
        let source = encounter_source(&ctx.game, &ctx.overrides, &ctx.turn_order)?;
        crate::exec::same_game(&ctx.game, source.hash, ctx.game_hash)?;
        let program = source.program;
        let ev = Evaluator::new(&ctx.config, &program).map_err(|e| anyhow!("{}: {e}", ctx.config_path.display()))?;
        Ok((program, ev))
    }

    fn run((program, ev): &Self::Worker, job: &VerifyJob) -> Result<GameOutcome> {
        ev.play(program, job.pair, job.seed, None)
    }
}
