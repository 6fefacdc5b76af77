//! `balance`, `verify` and `landscape`: argument checking, progress bars and printing around
//! the library's balance module.

use crate::balance::config::BalanceConfig;
use crate::balance::run::{RunOptions, run};
use anyhow::{Result, anyhow};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct BalanceArgs {
    /// The balance config (TOML), e.g. configs/hexmage_balance.toml.
    pub config: PathBuf,
    /// Override the optimizer: es, sa or cma.
    #[arg(long)]
    pub optimizer: Option<String>,
    /// Stop after this many iterations (resumable with --resume).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub iterations: Option<u64>,
    #[command(flatten)]
    pub run: super::RunArgs,
}

/// Ctrl-C sets a flag; the loop checkpoints and stops after the iteration in progress.
pub fn install_interrupt() {
    super::on_interrupt("finishing the iteration in progress, then saving");
}

pub fn load_config(path: &std::path::Path, seed: Option<u64>, optimizer: Option<&str>) -> Result<(BalanceConfig, String)> {
    let (mut cfg, text) = BalanceConfig::load(path)?;
    if let Some(s) = seed {
        cfg.balance.seed = s;
    }
    if let Some(o) = optimizer {
        if !crate::balance::config::OPTIMIZERS.has(o) {
            return Err(anyhow!("--optimizer {o}; expected {}", crate::balance::config::OPTIMIZERS));
        }
        cfg.balance.optimizer = o.to_string();
    }
    Ok((cfg, text))
}

pub fn balance(args: &BalanceArgs) -> Result<()> {
    let (mut cfg, text) = load_config(&args.config, args.run.seed, args.optimizer.as_deref())?;
    if let Some(out) = &args.run.out {
        cfg.balance.out = out.clone();
    }
    let exec = args.run.exec.executor()?;
    install_interrupt();
    let bar = super::progress_bar(args.run.quiet, 0, "games");
    let opts = RunOptions {
        resume: args.run.resume,
        max_iterations: args.iterations,
        light: false,
        restart_stale: false,
        exec: exec.clone(),
        hook: None,
    };
    let o = run(&cfg, &args.config, &text, &opts, &|done, total, best, it| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(format!("iteration {it}, best F {best:.4}"));
    })?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    let last = o.history.last();
    writeln!(
        out,
        "{} ({}, seed {}): {} iterations, {} games, {:.1} s",
        cfg.balance.name,
        cfg.balance.optimizer,
        cfg.balance.seed,
        o.history.len(),
        o.games_played,
        last.map_or(0.0, |r| r.elapsed_s)
    )?;
    match &o.best {
        Some(b) => {
            let e = &b.eval;
            writeln!(
                out,
                "best F {:.4} (confirmed over {} games, iteration {}): balance {:.3}, length {:.3} ({:.1} turns), difference {:.3}; wins {}/{} draws {}",
                e.f, e.games, b.iteration, e.balance, e.length, e.mean_turns, e.difference, e.wins[0], e.wins[1], e.draws
            )?;
            let how = if o.reached { "target reached" } else { "target not reached" };
            writeln!(out, "{how} (F > {})", cfg.balance.target)?;
        }
        None => writeln!(out, "no encounter evaluated yet")?,
    }
    if let Some(line) = args.run.exec.summary(&exec, &o.dir)? {
        writeln!(out, "{line}")?;
    }
    let interrupted = o.interrupted || crate::drive::stop::requested();
    if interrupted {
        writeln!(out, "interrupted; continue with: playforge balance {} --resume", args.config.display())?;
    }
    writeln!(
        out,
        "wrote {}/{{config.toml, history.csv, best_encounter.toml, best_dna.txt, convergence.png/.svg, replays/, checkpoint.json}}",
        o.dir.display()
    )?;
    super::write_report(&o.dir)?;
    if interrupted {
        return Err(super::Interrupted.into());
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The encounter, e.g. outputs/hexmage_balance/cma-seed-1/best_encounter.toml; or generated
    /// content: a generate run's best.toml, an elite (elites/cell-….toml), or the run's folder.
    pub file: PathBuf,
    /// Games per AI pair (default 200); for generated content, per table (default: the
    /// config's `verify_games`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub games: Option<u64>,
    /// Seed of the verification games.
    #[arg(long, default_value_t = 12345)]
    pub seed: u64,
    /// The balance config whose AI pairs play (default: the file's `config`); for generated
    /// content, the generate config (default: its run folder's config.toml).
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub exec: super::ExecArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn verify(args: &VerifyArgs) -> Result<()> {
    verify_with(args, |exec, progress| {
        let r = crate::balance::verify::verify(&args.file, args.config.as_deref(), args.games.unwrap_or(200), args.seed, exec, progress)?;
        Ok((r.markdown.clone(), r.dir.clone(), r))
    })?;
    Ok(())
}

/// The body every `verify` shares: a progress bar over the games `check` plays, then its
/// markdown table, the executor's line and the files written; returns what `check` found.
pub(super) fn verify_with<R>(
    args: &VerifyArgs,
    check: impl FnOnce(&crate::exec::Executor, &(dyn Fn(u64, u64) + Sync)) -> Result<(String, std::path::PathBuf, R)>,
) -> Result<R> {
    let bar = super::progress_bar(args.quiet, 0, "games");
    let exec = args.exec.executor()?;
    let (markdown, dir, r) = check(&exec, &|d, t| {
        bar.set_length(t);
        bar.set_position(d);
    })?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    write!(out, "{markdown}")?;
    if let Some(line) = args.exec.summary(&exec, &dir)? {
        writeln!(out, "{line}")?;
    }
    writeln!(out, "wrote {}/{{verify.md, verify.csv}}", dir.display())?;
    super::write_report(&dir)?;
    Ok(r)
}

#[derive(clap::Args)]
pub struct LandscapeArgs {
    /// The balance config (TOML): game, teams, fitness, AI pairs, mutation.
    pub config: PathBuf,
    /// Random valid encounters to sample.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub samples: u64,
    /// One-mutation neighbours per sample.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub neighbours: u64,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write under DIR instead of the config's `out` (default outputs/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub exec: super::ExecArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn landscape(args: &LandscapeArgs) -> Result<()> {
    let (mut cfg, text) = load_config(&args.config, args.seed, None)?;
    if let Some(out) = &args.out {
        cfg.balance.out = out.clone();
    }
    let bar = super::progress_bar(args.quiet, 0, "samples");
    let exec = args.exec.executor()?;
    let l = crate::balance::landscape::landscape(&cfg, &args.config, &text, args.samples, args.neighbours, &exec, &|d, t| {
        bar.set_length(t);
        bar.set_position(d);
    })?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    write!(out, "{}", l.markdown)?;
    if let Some(line) = args.exec.summary(&exec, &l.dir)? {
        writeln!(out, "{line}")?;
    }
    writeln!(out, "wrote {}/{{landscape.md, landscape.csv}}", l.dir.display())?;
    super::write_report(&l.dir)?;
    Ok(())
}
