//! `generate`: argument checking, the progress bar and the summary around the library's
//! generate module; `verify` hands generated content here (see [`crate::generate::verify`]).

use crate::generate::config::{ALGORITHMS, GenerateConfig};
use crate::generate::run::{RunOptions, run};
use anyhow::{Result, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// The generate config (TOML), e.g. configs/generate_match3.toml.
    pub config: PathBuf,
    /// Override the algorithm: cma (one answer), map-elites, cma-me or cma-mae (a map of answers).
    #[arg(long)]
    pub algorithm: Option<String>,
    /// Override the budget, in candidate evaluations.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub evaluations: Option<u64>,
    /// Stop after this many iterations (resumable with --resume).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub iterations: Option<u64>,
    #[command(flatten)]
    pub run: super::RunArgs,
}

pub fn generate(args: &GenerateArgs) -> Result<()> {
    let (mut cfg, text) = GenerateConfig::load(&args.config)?;
    if let Some(s) = args.run.seed {
        cfg.generate.seed = s;
    }
    if let Some(a) = &args.algorithm {
        if !ALGORITHMS.has(a) {
            bail!("--algorithm {a}; expected {ALGORITHMS}");
        }
        if (a == "cma") != (cfg.generate.algorithm == "cma") {
            bail!(
                "--algorithm {a}: the config is written for algorithm = \"{}\" ({}); expected an algorithm of the same kind, or edit the config",
                cfg.generate.algorithm,
                if cfg.is_map() { "a map, with [[descriptor]] tables" } else { "one answer" }
            );
        }
        cfg.generate.algorithm = a.clone();
    }
    if let Some(e) = args.evaluations {
        cfg.generate.max_evaluations = e;
    }
    if let Some(out) = &args.run.out {
        cfg.generate.out = out.clone();
    }
    let exec = args.run.exec.executor()?;
    super::on_interrupt("finishing the iteration in progress, then saving");
    let bar = super::progress_bar(args.run.quiet, 0, "games");
    let opts = RunOptions { resume: args.run.resume, max_iterations: args.iterations, exec: exec.clone(), ..RunOptions::default() };
    let o = run(&cfg, &args.config, &text, &opts, &|done, total, msg| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(msg.to_string());
    })?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    let g = &cfg.generate;
    writeln!(
        out,
        "{} ({}, seed {}): {} iterations, {} of {} games, {:.1} s{}",
        g.name,
        g.algorithm,
        g.seed,
        o.history.len(),
        o.games_played,
        o.budget_games,
        o.elapsed_s,
        g.budget_minutes.map_or(String::new(), |b| format!(" (the config's budget: {b} min)"))
    )?;
    if cfg.is_map() {
        writeln!(
            out,
            "map: {} of {} cells filled (coverage {:.1}%), QD-score {:.3}",
            o.archive.cells.len(),
            o.archive.n_cells(),
            100.0 * o.archive.coverage(),
            o.archive.qd_score()
        )?;
    }
    match &o.best {
        Some(b) => {
            writeln!(out, "best quality F {:.4} (confirmed over {} games per table, iteration {})", b.eval.f, b.eval.games, b.iteration)?;
            for (m, e) in cfg.measures.iter().zip(&b.eval.measures) {
                let (lo, hi) = e.ci();
                writeln!(out, "  {} = {:.2} [{lo:.2}, {hi:.2}]", m.name, e.mean)?;
            }
        }
        None => writeln!(out, "no feasible candidate confirmed yet")?,
    }
    if let Some(line) = args.run.exec.summary(&exec, &o.dir)? {
        writeln!(out, "{line}")?;
    }
    let files = if cfg.is_map() {
        "config.toml, history.csv, archive.csv, archive.png/.svg, elites/, best.toml, convergence.png/.svg, checkpoint.json"
    } else {
        "config.toml, history.csv, best.toml, convergence.png/.svg, checkpoint.json"
    };
    writeln!(out, "wrote {}/{{{files}}}", o.dir.display())?;
    super::write_report(&o.dir)?;
    writeln!(
        out,
        "check it on fresh seeds: playforge verify {}",
        if cfg.is_map() { o.dir.display().to_string() } else { o.dir.join("best.toml").display().to_string() }
    )?;
    let interrupted = o.interrupted || crate::drive::stop::requested();
    if interrupted {
        writeln!(out, "interrupted; continue with: playforge generate {} --resume", args.config.display())?;
        return Err(super::Interrupted.into());
    }
    Ok(())
}

/// `verify` of generated content (a best.toml, an elite, a run folder).
pub fn verify(args: &super::balance::VerifyArgs) -> Result<()> {
    let r = super::balance::verify_with(args, |exec, progress| {
        let r = crate::generate::verify::verify(&args.file, args.config.as_deref(), args.games, args.seed, exec, progress)?;
        Ok((r.markdown.clone(), r.dir.clone(), r))
    })?;
    if r.checked.iter().any(|c| !c.pass) {
        bail!("{} of {} fail their targets on fresh seeds (verify.md)", r.checked.iter().filter(|c| !c.pass).count(), r.checked.len());
    }
    Ok(())
}
