//! `play` and `experiment`: searches configured in TOML, with progress and a readable summary.

use crate::experiment::config::PlayConfig;
use crate::experiment::{play, repeat};
use anyhow::{Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct PlayArgs {
    /// The play configuration (TOML), e.g. configs/simple_coins.toml.
    pub config: PathBuf,
    /// Write under DIR instead of the config's `out` (default outputs/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// No progress spinner.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(clap::Args)]
pub struct ExperimentArgs {
    /// The experiment (TOML), e.g. configs/experiments/e7_duplicates.toml.
    pub config: PathBuf,
    /// Write under DIR instead of the config's `out` (default outputs/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue an interrupted experiment: keep the runs already in results.csv.
    #[arg(long)]
    pub resume: bool,
    #[command(flatten)]
    pub exec: super::ExecArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

fn spinner(quiet: bool, msg: String) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]").expect("valid template"));
    pb.set_message(msg);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

pub fn play(args: &PlayArgs) -> Result<()> {
    let mut cfg = PlayConfig::load(&args.config)?;
    if let Some(s) = args.seed {
        cfg.experiment.seed = s;
    }
    if let Some(o) = &args.out {
        cfg.experiment.out = o.clone();
    }
    // Held for the run (a second run on this folder is refused); a fresh run starts empty.
    let run_dir = crate::report::run_dir::RunDir::open(&play::out_dir(&cfg))?;
    run_dir.clear()?;
    let budget = match cfg.budget() {
        crate::search::mcts::Budget::Millis(ms) => format!("{:.1} s", ms as f64 / 1000.0),
        crate::search::mcts::Budget::Iterations(n) => format!("{n} iterations"),
    };
    let pb = spinner(args.quiet, format!("searching {} ({budget})", cfg.experiment.game.display()));
    let report = play::play(&cfg).map_err(|e| anyhow!(e))?;
    pb.finish_and_clear();
    let dir = play::write_outputs(&cfg, &report).map_err(|e| anyhow!(e))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{} on {} (seed {}): result {:.4}", report.experiment, report.game, report.seed, report.value)?;
    writeln!(out, "\n| value | final | normalized | weight |\n|---|---:|---:|---:|")?;
    for t in &report.terms {
        writeln!(out, "| {} | {} | {:.4} | {} |", t.value, t.raw, t.normalized, t.weight)?;
    }
    writeln!(out, "\ngoals reached {}/{}:", report.goals.len(), report.goals_total)?;
    for g in &report.goals {
        writeln!(out, "  goal {} ({}) after move {} at t = {} s", g.goal, g.text, g.moves, g.time)?;
    }
    writeln!(out, "\nbest path: {} moves; actions used:", report.moves)?;
    let mut acts: Vec<_> = report.action_counts.iter().collect();
    acts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (a, n) in acts {
        writeln!(out, "  {n:>5}  {a}")?;
    }
    writeln!(out, "objects used (owner or built/bound description):")?;
    let mut objs: Vec<_> = report.object_counts.iter().collect();
    objs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (o, n) in objs {
        writeln!(out, "  {n:>5}  {o}")?;
    }
    writeln!(
        out,
        "\nsearch: {} iterations in {:.2} s ({:.0}/s) over {} sub-games",
        report.iterations,
        report.seconds,
        report.iterations as f64 / report.seconds.max(1e-9),
        report.stages.len()
    )?;
    if cfg.timed() {
        writeln!(out, "\n{}", crate::experiment::config::NOT_REPRODUCIBLE)?;
    }
    writeln!(out, "wrote {}/ (config.toml, report.json, path.json, values.csv, values.png/.svg)", dir.display())?;
    super::write_report(&dir)?;
    Ok(())
}

pub fn experiment(args: &ExperimentArgs) -> Result<()> {
    let exec = args.exec.executor()?;
    if let Ok(text) = crate::input::read_text(&args.config)
        && crate::balance::compare::is_compare(&text)
    {
        super::balance::install_interrupt();
        let pb = super::progress_bar(args.quiet, 0, "runs");
        let c = crate::balance::compare::compare(&args.config, args.out.as_deref(), &exec, &|d, t, label| {
            pb.set_length(t);
            pb.set_position(d);
            pb.set_message(label.to_string());
        })?;
        pb.finish_and_clear();
        let mut out = std::io::stdout().lock();
        write!(out, "{}", c.markdown)?;
        if let Some(line) = args.exec.summary(&exec, &c.dir)? {
            writeln!(out, "{line}")?;
        }
        writeln!(out, "wrote {}/{{summary.md, runs.csv, chart.png/.svg, runs/}}", c.dir.display())?;
        super::write_report(&c.dir)?;
        return Ok(());
    }
    let (file, _) = repeat::load(&args.config).map_err(|e| anyhow!(e))?;
    let total = file.conditions.len() as u64 * file.experiment.seeds;
    let pb = super::progress_bar(args.quiet, total, "runs");
    let progress = |done: usize, _total: usize, cond: &str| {
        pb.set_position(done as u64);
        pb.set_message(cond.to_string());
    };
    let o = repeat::run(&args.config, args.out.as_deref(), args.resume, &exec, &progress).map_err(|e| anyhow!(e))?;
    pb.finish_and_clear();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{} ({} seeds per condition)\n", o.header.name, o.header.seeds)?;
    write!(out, "{}", repeat::markdown_summary(&o))?;
    writeln!(out, "\nWelch t-tests:\n{}", repeat::markdown_tests(&o.tests))?;
    if let Some(t) = &o.header.thesis {
        writeln!(out, "thesis: {t}")?;
    }
    if let Some(line) = args.exec.summary(&exec, &o.dir)? {
        writeln!(out, "{line}")?;
    }
    writeln!(out, "wrote {}/ (results.csv, summary.csv, welch.md, chart.png/.svg)", o.dir.display())?;
    super::write_report(&o.dir)?;
    Ok(())
}

#[derive(clap::Args)]
pub struct TournamentArgs {
    /// The tournament (TOML), e.g. configs/hex_tournament.toml.
    pub config: PathBuf,
    /// Write under DIR instead of the config's `out` (default outputs/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the number of random encounters.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub encounters: Option<u64>,
    /// Override the config's seed.
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub exec: super::ExecArgs,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn tournament(args: &TournamentArgs) -> Result<()> {
    use crate::experiment::tournament::{TournamentConfig, run};
    let mut cfg = TournamentConfig::load(&args.config)?;
    if let Some(n) = args.encounters {
        cfg.tournament.encounters = n;
    }
    if let Some(s) = args.seed {
        cfg.tournament.seed = s;
    }
    if let Some(o) = &args.out {
        cfg.tournament.out = o.clone();
    }
    // One folder per (name, seed); held for the run, and a fresh run starts empty.
    let out = cfg.tournament.out.join(&cfg.tournament.name).join(format!("seed-{}", cfg.tournament.seed));
    let run_dir = crate::report::run_dir::RunDir::open(&out)?;
    run_dir.clear()?;
    let bar = super::progress_bar(args.quiet, 0, "games");
    let exec = args.exec.executor()?;
    let md = run(&cfg, &out, &exec, &|done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })?;
    bar.finish_and_clear();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{md}")?;
    if let Some(line) = args.exec.summary(&exec, &out)? {
        writeln!(stdout, "{line}")?;
    }
    writeln!(stdout, "wrote {}/{{games.csv, table.csv, table.md, config.toml, replays/}}", out.display())?;
    super::write_report(&out)?;
    Ok(())
}
