//! The optimizer comparison (`playforge experiment configs/compare_optimizers.toml`): every
//! optimizer runs the same balance config, with the same budget, on the same seeds; the chart
//! gives the mean best-so-far F against games played with a band (min to max over seeds), the
//! table how many seeds passed the target and after how many iterations and games.
//!
//! Each run keeps its own checkpoint, so an interrupted comparison resumes where it stopped.

use super::config::BalanceConfig;
use super::run::{Row, RunOptions, run};
use crate::config::merge;
use crate::report::{chart, csv_bytes, write_atomic};
use anyhow::{Result, anyhow, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareFile {
    pub compare: CompareHeader,
    /// Merged into the base config for every run (e.g. `[overrides.balance] max_evaluations`).
    #[serde(default)]
    pub overrides: toml::Table,
    /// … and named variants: `[[arm]] name = "sa-classic"`, `optimizer = "sa"`, with their own
    /// `[arm.overrides]` on top of the common ones.
    #[serde(default, rename = "arm")]
    pub arms: Vec<Arm>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    pub name: String,
    pub optimizer: String,
    #[serde(default)]
    pub overrides: toml::Table,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareHeader {
    pub name: super::config::FolderName,
    /// The balance config every run starts from.
    pub base: PathBuf,
    #[serde(default = "ten")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000>")]
    pub seeds: u64,
    #[serde(default = "one")]
    pub first_seed: u64,
    /// Optimizers by name (`es`, `sa`, `cma`), each with the base settings …
    #[serde(default)]
    pub optimizers: Vec<String>,
    #[serde(default = "outputs")]
    pub out: PathBuf,
    /// What the paper found, printed beside the table.
    #[serde(default)]
    pub paper: Option<String>,
}

fn ten() -> u64 {
    10
}
fn one() -> u64 {
    1
}
fn outputs() -> PathBuf {
    PathBuf::from("outputs")
}

/// Whether a TOML file is an optimizer comparison (it has a `[compare]` table).
pub fn is_compare(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("compare"))
}

pub struct Comparison {
    pub markdown: String,
    pub dir: PathBuf,
}

/// Runs (or resumes) every (optimizer, seed); `progress(done runs, total, label)`.
/// `out` replaces the config's output root.
pub fn compare(path: &Path, out: Option<&Path>, exec: &crate::exec::Executor, progress: &dyn Fn(u64, u64, &str)) -> Result<Comparison> {
    let text = crate::input::read_text(path)?;
    let mut file: CompareFile = crate::config::toml(&path.display().to_string(), &text).map_err(|e| anyhow!(e))?;
    if let Some(o) = out {
        file.compare.out = o.to_path_buf();
    }
    let h = &file.compare;
    let mut arms: Vec<Arm> =
        h.optimizers.iter().map(|o| Arm { name: o.clone(), optimizer: o.clone(), overrides: toml::Table::new() }).collect();
    arms.extend(file.arms.iter().cloned());
    if arms.is_empty() {
        bail!(
            "{}: no optimizers; expected `optimizers = [\"es\", \"sa\", \"cma\"]` or [[arm]] tables",
            super::config::locate(path, &text, "compare", 0, "")
        );
    }
    for a in &arms {
        if !super::config::OPTIMIZERS.has(&a.optimizer) {
            bail!(
                "{}: optimizer \"{}\"; expected {}",
                super::config::locate(path, &text, "compare", 0, "optimizers"),
                a.optimizer,
                super::config::OPTIMIZERS
            );
        }
        if let Err(e) = super::config::FolderName::new(&a.name) {
            bail!("{}: arm {e}", path.display());
        }
        if arms.iter().filter(|b| b.name == a.name).count() > 1 {
            bail!("{}: two arms are called \"{}\"; expected distinct names", path.display(), a.name);
        }
    }
    // Paths in a config are relative to the config file; so is the base's game to the base.
    let base = crate::config::resolve_path(path, &h.base);
    let base_text = crate::input::read_text(&base)?;
    let mut table: toml::Table = crate::config::toml(&base.display().to_string(), &base_text).map_err(|e| anyhow!(e))?;
    crate::config::anchor_game(&mut table, "balance", &base);
    merge(&mut table, &file.overrides);
    let dir = h.out.join(&h.name);
    let total = arms.len() as u64 * h.seeds;
    let mut results: Vec<(String, u64, Vec<Row>, f64)> = Vec::new();
    let mut done = 0;
    let mut budget = 0;
    let mut target = 0.95;
    for arm in &arms {
        let o = &arm.name;
        for seed in h.first_seed..h.first_seed + h.seeds {
            progress(done, total, &format!("{o} seed {seed}"));
            let mut t = table.clone();
            merge(&mut t, &arm.overrides);
            let b =
                t.get_mut("balance").and_then(|b| b.as_table_mut()).ok_or_else(|| anyhow!("{}: no [balance] table", h.base.display()))?;
            b.insert("optimizer".into(), toml::Value::String(arm.optimizer.clone()));
            b.insert("seed".into(), toml::Value::Integer(seed as i64));
            b.insert("name".into(), toml::Value::String(o.clone()));
            b.insert("out".into(), toml::Value::String(dir.join("runs").display().to_string()));
            let run_text = toml::to_string(&t)?;
            // The merged text has no lines of its own: errors name the comparison and the arm.
            let where_ = PathBuf::from(format!("{} (arm `{o}`: {} + overrides)", path.display(), h.base.display()));
            let cfg = BalanceConfig::parse(&where_, &run_text).map_err(|e| anyhow!("{e:#}").context("a run of the comparison"))?;
            let arm_budget = cfg.balance.max_evaluations * cfg.evaluation.games * cfg.evaluation.pairs.len() as u64;
            if done > 0 && (arm_budget != budget || cfg.balance.target != target) {
                bail!(
                    "{}: arm `{o}` has a budget of {arm_budget} games and target {}, others {budget} and {target}; expected the same budget and target for every arm",
                    path.display(),
                    cfg.balance.target
                );
            }
            budget = arm_budget;
            target = cfg.balance.target;
            let out = run(
                &cfg,
                &where_,
                &run_text,
                &RunOptions { resume: true, max_iterations: None, light: true, restart_stale: true, exec: exec.clone(), hook: None },
                &|_, _, _, _| {},
            )?;
            if out.interrupted {
                bail!("interrupted during {o} seed {seed}; run the comparison again to resume where it stopped");
            }
            let best = out.best.as_ref().map_or(0.0, |b| b.eval.f);
            results.push((o.clone(), seed, out.history, best));
            done += 1;
        }
    }
    progress(done, total, "done");
    // Best so far against games played, on a common grid.
    // The last iteration of a run may overshoot the budget a little: the grid covers it.
    let end = results.iter().filter_map(|r| r.2.last().map(|row| row.games)).max().unwrap_or(budget).max(budget);
    let grid: Vec<u64> = (0..=100).map(|k| end * k / 100).collect();
    let at = |h: &[Row], g: u64| h.iter().take_while(|r| r.games <= g).last().map_or(0.0, |r| r.best_so_far);
    let mut series = Vec::new();
    let mut md = format!(
        "Optimizer comparison `{}`: {} seeds each, the same budget ({budget} games), base `{}`. F > {target} counts when confirmed.\n\n\
         | optimizer | seeds with F > {target} | median iterations to it | median games to it | final best F (mean ± sd) |\n|---|---|---|---|---|\n",
        h.name,
        h.seeds,
        h.base.display()
    );
    let mut csv_rows = Vec::new();
    for o in arms.iter().map(|a| &a.name) {
        let runs: Vec<&(String, u64, Vec<Row>, f64)> = results.iter().filter(|r| &r.0 == o).collect();
        let curves: Vec<Vec<f64>> = runs.iter().map(|r| grid.iter().map(|&g| at(&r.2, g)).collect()).collect();
        let mean: Vec<(f64, f64)> =
            grid.iter().enumerate().map(|(i, &g)| (g as f64, curves.iter().map(|c| c[i]).sum::<f64>() / curves.len() as f64)).collect();
        let band: Vec<(f64, f64, f64)> = grid
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                let v = curves.iter().map(|c| c[i]);
                (g as f64, v.clone().fold(f64::INFINITY, f64::min), v.fold(f64::NEG_INFINITY, f64::max))
            })
            .collect();
        series.push(chart::Series { name: o.clone(), points: mean, band: Some(band), markers: false });
        let hits: Vec<(u64, u64)> =
            runs.iter().filter_map(|r| r.2.iter().find(|row| row.best_so_far > target).map(|row| (row.iteration + 1, row.games))).collect();
        let median = |mut v: Vec<u64>| {
            v.sort_unstable();
            if v.is_empty() { "–".to_string() } else { v[v.len() / 2].to_string() }
        };
        let finals: Vec<f64> = runs.iter().map(|r| r.3).collect();
        let s = crate::report::stats::summary(&finals);
        md.push_str(&format!(
            "| {o} | {}/{} | {} | {} | {:.4} ± {:.4} |\n",
            hits.len(),
            runs.len(),
            median(hits.iter().map(|h| h.0).collect()),
            median(hits.iter().map(|h| h.1).collect()),
            s.mean,
            s.sd
        ));
        for r in &runs {
            let hit = r.2.iter().find(|row| row.best_so_far > target);
            csv_rows.push(vec![
                o.clone(),
                r.1.to_string(),
                format!("{:.5}", r.3),
                hit.map_or(String::new(), |row| (row.iteration + 1).to_string()),
                hit.map_or(String::new(), |row| row.games.to_string()),
                r.2.len().to_string(),
                r.2.last().map_or(0, |row| row.games).to_string(),
            ]);
        }
    }
    if let Some(p) = &h.paper {
        md.push_str(&format!("\npaper: {p}\n"));
    }
    let header: Vec<String> =
        ["optimizer", "seed", "best_f", "iterations_to_target", "games_to_target", "iterations", "games"].map(String::from).to_vec();
    write_atomic(&dir.join("runs.csv"), &csv_bytes(&header, &csv_rows))?;
    write_atomic(&dir.join("summary.md"), md.as_bytes())?;
    let panel = chart::Panel {
        title: format!("mean best-so-far F over {} seeds (band: min to max)", h.seeds),
        x_label: "games played".into(),
        y_label: "best confirmed F".into(),
        series,
    };
    chart::line_panels(
        &dir.join("chart.png"),
        &format!(
            "{}: {} (seeds {}–{})",
            h.name,
            arms.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(" vs "),
            h.first_seed,
            h.first_seed + h.seeds - 1
        ),
        &[panel],
        1000,
        520,
    )
    .map_err(|e| anyhow!("chart.png: {e}"))?;
    Ok(Comparison { markdown: md, dir })
}
