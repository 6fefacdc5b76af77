//! `playtest`: argument checking, the progress bar and printing around the library's playtest
//! module.

use crate::playtest::config::PlaytestConfig;
use crate::playtest::run::{run_playtest, write_reports};
use crate::playtest::setup::Setup;
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[derive(clap::Args)]
pub struct PlaytestArgs {
    /// The playtest config (TOML), e.g. configs/playtest_stacker.toml.
    pub config: PathBuf,
    /// Override the rollouts per search.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub rollouts: Option<u64>,
    /// Override the replicates per condition.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub replicates: Option<u64>,
    #[command(flatten)]
    pub run: super::RunArgs,
}

/// Loads the config with the command line's overrides applied.
pub fn setup(config: &Path, seed: Option<u64>, rollouts: Option<u64>, replicates: Option<u64>, out: Option<&Path>) -> Result<Setup> {
    let (mut cfg, text) = PlaytestConfig::load(config)?;
    if let Some(s) = seed {
        cfg.playtest.seed = s;
    }
    if let Some(n) = rollouts {
        cfg.playtest.rollouts = n;
    }
    if let Some(n) = replicates {
        cfg.playtest.replicates = n;
    }
    Setup::new(cfg, &text, config, out.unwrap_or(Path::new("outputs")))
}

pub fn playtest(args: &PlaytestArgs) -> Result<()> {
    let mut setup = setup(&args.config, args.run.seed, args.rollouts, args.replicates, args.run.out.as_deref())?;
    setup.exec = args.run.exec.executor()?;
    let out = setup.out_dir.clone();
    if args.run.resume && !out.join("runs").exists() {
        bail!(
            "--resume: no replicates in {}/runs; expected the folder of an interrupted run of this config and seed (run without --resume to start afresh)",
            out.display()
        );
    }
    // Held for the run: a second run on this folder is refused, not raced; a fresh run starts
    // from an empty folder.
    let run_dir = crate::report::run_dir::RunDir::open(&out)?;
    if !args.run.resume {
        run_dir.clear()?;
    }
    super::on_interrupt("keeping the replicates already finished");
    let resolved = toml::to_string(&setup.cfg).map_err(|e| anyhow!("{e}"))?;
    crate::report::write_atomic(&out.join("config.toml"), resolved.as_bytes()).map_err(|e| anyhow!("cannot write config.toml: {e}"))?;
    let s = &setup.cfg.playtest;
    if !args.run.quiet {
        eprintln!(
            "{}: {} conditions × {} replicates × {} rollouts on {} {}",
            s.name,
            setup.conditions.len(),
            s.replicates,
            s.rollouts,
            setup.exec.cpus(),
            if args.run.exec.ray.is_some() { "Ray CPUs" } else { "threads" }
        );
    }
    let bar = super::progress_bar(args.run.quiet, setup.total_rollouts(), "rollouts");
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let t0 = std::time::Instant::now();
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                bar.set_position(done.load(Ordering::Relaxed));
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        });
        let r = run_playtest(&setup, args.run.resume, &done);
        stop.store(true, Ordering::Relaxed);
        r
    })?;
    bar.finish_and_clear();
    if outcome.interrupted {
        let n: usize = outcome.reps.iter().map(Vec::len).sum();
        outln!("interrupted: {n} replicates saved in {}/runs; run again with --resume to continue", out.display())?;
        return Err(super::Interrupted.into());
    }
    let (_, md) = write_reports(&setup, &outcome)?;
    out!("{md}")?;
    if let Some(line) = args.run.exec.summary(&setup.exec, &out)? {
        outln!("{line}")?;
    }
    outln!("\n{:.1} s; outputs in {}/", t0.elapsed().as_secs_f64(), out.display())?;
    super::write_report(&out)?;
    Ok(())
}

/// `playforge bench --external CONFIG`: the rollouts per second of an external game's search
/// on 1 and 2 processes (docs/bridge.md, "Throughput").
pub fn bench_external(args: &super::run::BenchArgs, config: &Path) -> Result<()> {
    use std::io::Write as _;
    let setup = setup(config, Some(args.seed), None, None, None)?;
    if setup.cfg.external.is_none() {
        anyhow::bail!("{}: no [external] table; expected a playtest config of a game in its own process", config.display());
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "| workers | rollouts/s | decisions/s | decisions per rollout | µs per rollout |")?;
    writeln!(out, "|---:|---:|---:|---:|---:|")?;
    for workers in [1, 2] {
        let t = crate::playtest::external::bench(&setup, workers, args.seconds)?;
        let per = t.rollouts.max(1) as f64;
        writeln!(
            out,
            "| {} | {:.0} | {:.0} | {:.1} | {:.1} |",
            t.workers,
            per / t.seconds,
            t.decisions as f64 / t.seconds,
            t.decisions as f64 / per,
            t.seconds * 1e6 / per
        )?;
    }
    Ok(())
}
