//! `personas` and `persona-play`: argument checking, the progress bar and printing around the
//! library's persona module.

use crate::persona::jobs::Setup;
use crate::persona::play::{Agent, GameResult};
use crate::persona::run::{PersonaOutcome, finished, has_checkpoint, run_chosen};
use crate::search::formula::Formula;
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(clap::Args)]
pub struct PersonasArgs {
    /// The persona config (TOML), e.g. configs/personas_quick.toml.
    pub config: PathBuf,
    /// Evolve only these personas (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Override the number of generations.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub generations: Option<u64>,
    #[command(flatten)]
    pub run: super::RunArgs,
}

#[derive(clap::Args)]
pub struct PersonaPlayArgs {
    /// The persona config the formula was evolved with (game, search settings, personas).
    pub config: PathBuf,
    /// Which persona's measure and direction the player uses.
    #[arg(long)]
    pub persona: String,
    /// A best_formula.txt written by `playforge personas` (its first line is the formula, and
    /// its `# goal:` line the binary reward's goal).
    #[arg(long, conflicts_with_all = ["formula", "agent"])]
    pub from: Option<PathBuf>,
    /// A formula as text, e.g. "wins / visits + sqrt(parent) / visits".
    #[arg(long, conflicts_with = "agent")]
    pub formula: Option<String>,
    /// A baseline instead of a formula: `vanilla` (UCB1) or `random`.
    #[arg(long)]
    pub agent: Option<String>,
    /// The goal of the binary reward (default: from --from, else the random player's mean on
    /// the same seeds).
    #[arg(long)]
    pub goal: Option<f64>,
    /// Chance seeds of the games, e.g. `1-50` or `3,7,9` (default: the config's held-out seeds).
    #[arg(long)]
    pub seeds: Option<String>,
    /// Seed of the player's own random stream.
    #[arg(long, default_value_t = 1)]
    pub player_seed: u64,
}

#[derive(clap::Args)]
pub struct HumansArgs {
    /// The persona config the personas were evolved with (game, score, search settings).
    pub config: PathBuf,
    /// A folder of human traces: games played through `playforge serve` (its traces/<game>/
    /// folder), in the replay format with their chance seeds.
    #[arg(long)]
    pub traces: PathBuf,
    /// The personas run folder whose <persona>/best_formula.txt play (default: the config's
    /// outputs/<name>/seed-<seed>).
    #[arg(long)]
    pub from: Option<PathBuf>,
    /// Games each agent plays on each board (its own stream each time).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub games: u64,
    /// Override the config's seed (which personas run is read by default, and the agents' streams).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write under DIR instead of outputs/ (outputs/<name>/humans/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `humans`: the human traces beside every persona and baseline on the same boards.
pub fn humans(args: &HumansArgs) -> Result<()> {
    let setup = setup(&args.config, args.seed, None, args.out.as_deref())?;
    let from = args.from.clone().unwrap_or_else(|| setup.out_dir.clone());
    let dir = setup.out_dir.parent().unwrap_or(&setup.out_dir).join("humans");
    let run_dir = crate::report::run_dir::RunDir::open(&dir)?;
    run_dir.clear()?;
    let done = AtomicU64::new(0);
    let c = crate::persona::humans::compare(&setup, &args.traces, &from, args.games, &done)?;
    out!("{}", c.markdown)?;
    outln!("wrote {}/{{humans.md, humans.csv, humans.png/.svg}}", c.dir.display())?;
    drop(run_dir);
    super::write_report(&c.dir)?;
    Ok(())
}

pub fn install_interrupt() {
    super::on_interrupt("finishing the generation in progress, then saving");
}

fn setup(config: &Path, seed: Option<u64>, generations: Option<u64>, out: Option<&Path>) -> Result<Setup> {
    Setup::load(config, seed, generations, out)
}

pub fn personas(args: &PersonasArgs) -> Result<()> {
    let mut setup = setup(&args.config, args.run.seed, args.generations, args.run.out.as_deref())?;
    setup.exec = args.run.exec.executor()?;
    let chosen: Vec<usize> = if args.only.is_empty() {
        (0..setup.cfg.list.len()).collect()
    } else {
        args.only
            .iter()
            .map(|n| {
                setup.cfg.list.iter().position(|p| &p.name == n).ok_or_else(|| {
                    let known: Vec<&str> = setup.cfg.list.iter().map(|p| p.name.as_str()).collect();
                    anyhow!("--only {n}: no such persona in {}; expected one of {}", args.config.display(), known.join(", "))
                })
            })
            .collect::<Result<_>>()?
    };
    if args.run.resume && !chosen.iter().any(|&k| has_checkpoint(&setup, k)) {
        bail!(
            "--resume: no checkpoint in {}/<persona>/; expected the folder of an interrupted run of this config and seed (run without --resume to start afresh)",
            setup.out_dir.display()
        );
    }
    install_interrupt();
    // The held-out table holds every persona finished so far, in the config's order.
    let others = (0..setup.cfg.list.len()).filter(|k| !chosen.contains(k) && finished(&setup, *k).is_some()).count();
    let total = setup.total_games(chosen.len(), chosen.len() + others);
    let bar = super::progress_bar(args.run.quiet, total, "games");
    let done = AtomicU64::new(0);
    let t0 = std::time::Instant::now();
    let mut outcomes: Vec<(usize, PersonaOutcome)> = Vec::new();
    let msg = |m: &str| bar.set_message(m.to_string());
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                bar.set_position(done.load(Ordering::Relaxed));
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        });
        let r = run_chosen(&setup, &chosen, args.run.resume, &done, &msg).map(|o| outcomes = o);
        stop.store(true, Ordering::Relaxed);
        r
    })?;
    bar.finish_and_clear();
    let out = &setup.out_dir;
    if outcomes.iter().any(|(_, o)| o.interrupted) {
        outln!("interrupted: checkpoints saved in {}; run again with --resume to continue", out.display())?;
        return Err(super::Interrupted.into());
    }
    for (_, o) in &outcomes {
        let last = o.history.last().expect("a generation");
        outln!(
            "{:<6} generation {:>3}: best mean {:>9.2} (score {:>6.0}, legal moves {:>5.2}); vanilla {:.2}, random {:.2}",
            o.name,
            last.generation,
            last.best,
            last.best_score,
            last.best_legal_moves,
            last.vanilla,
            last.random
        )?;
        outln!("       {}", last.best_simplified)?;
    }
    if setup.cfg.personas.held_out > 0 {
        outln!()?;
        out!("{}", std::fs::read_to_string(out.join("held_out.md")).unwrap_or_default())?;
    }
    if let Some(line) = args.run.exec.summary(&setup.exec, out)? {
        outln!("{line}")?;
    }
    outln!(
        "\n{} in {:.1} s; outputs in {}/ (per persona: history.csv, convergence.png, hall_of_fame.md, best_formula.txt, population.csv)",
        total_label(&done),
        t0.elapsed().as_secs_f64(),
        out.display()
    )?;
    super::write_report(out)?;
    Ok(())
}

fn total_label(done: &AtomicU64) -> String {
    format!("{} games", done.load(Ordering::Relaxed))
}

/// `1-50`, `3,7,9`, `1-3,10`.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let bad = || anyhow!("--seeds `{part}`; expected numbers and ranges such as `1-50` or `3,7,9`");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u64, u64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a > b || b - a > 1_000_000 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

pub fn persona_play(args: &PersonaPlayArgs) -> Result<()> {
    let setup = setup(&args.config, None, None, None)?;
    let k = setup.cfg.list.iter().position(|p| p.name == args.persona).ok_or_else(|| {
        let known: Vec<&str> = setup.cfg.list.iter().map(|p| p.name.as_str()).collect();
        anyhow!("--persona {}: not in {}; expected one of {}", args.persona, args.config.display(), known.join(", "))
    })?;
    let p = &setup.cfg.list[k];
    let seeds = match &args.seeds {
        Some(s) => parse_seeds(s)?,
        None => setup.held_out_seeds(),
    };
    if seeds.is_empty() {
        bail!("no seeds to play; expected --seeds such as 1-50");
    }
    let (formula, saved_goal) = match (&args.from, &args.formula, args.agent.as_deref()) {
        (Some(f), _, _) => {
            let (f, g) = crate::persona::run::read_formula_file(f)?;
            (Some(f), g)
        }
        (None, Some(t), _) => (Some(Formula::parse(t).map_err(|e| anyhow!("--formula: {e}"))?), None),
        (None, None, Some("vanilla")) => (Some(setup.vanilla()), None),
        (None, None, Some("random")) => (None, None),
        (None, None, Some(a)) => bail!("--agent {a}; expected `vanilla` or `random`"),
        (None, None, None) => bail!("nothing to play; expected --from FILE, --formula TEXT or --agent vanilla|random"),
    };
    let done = AtomicU64::new(0);
    let player = |j: u64| (args.player_seed, 0, 0, j);
    let agent = match formula {
        None => Agent::Random,
        Some(f) => {
            let goal = match (args.goal, saved_goal) {
                (Some(g), _) | (None, Some(g)) => g,
                (None, None) => {
                    let rs = crate::persona::run::play_many(&setup, k, &Agent::Random, &seeds, player, &done)?;
                    rs.iter().map(|r| r.measure).sum::<f64>() / rs.len() as f64
                }
            };
            Agent::Mcts { formula: f, reward: setup.reward(p, goal) }
        }
    };
    outln!("{:>20}  {:>8}  {:>11}  {:>10}", "seed", "score", "legal moves", p.measure)?;
    let mut all: Vec<GameResult> = Vec::new();
    for (j, &seed) in seeds.iter().enumerate() {
        let r = setup.play(k, &agent, seed, player(j as u64))?;
        outln!("{seed:>20}  {:>8.0}  {:>11.2}  {:>10.3}", r.score, r.legal_moves, r.measure)?;
        all.push(r);
    }
    let col = |f: fn(&GameResult) -> f64| crate::report::stats::summary(&all.iter().map(f).collect::<Vec<_>>());
    let (score, legal, measure) = (col(|r| r.score), col(|r| r.legal_moves), col(|r| r.measure));
    outln!(
        "{:>20}  {:>8.0}  {:>11.2}  {:>10.3}   (score sd {:.0}, {} games)",
        "mean",
        score.mean,
        legal.mean,
        measure.mean,
        score.sd,
        score.n
    )?;
    Ok(())
}
