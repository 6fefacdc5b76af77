//! What a generate run writes: history.csv and timing.csv, the best candidate (`best.toml`), the
//! map's elites (`elites/cell-….toml`, `archive.csv`, `archive.png`) and the convergence chart —
//! each candidate as a file that `run --params` plays and `verify` checks.

use super::archive::{Archive, Elite};
use super::config::GenerateConfig;
use super::jobs::Setup;
use crate::drive::content;
use crate::report::{chart, csv_bytes, num, write_atomic};
use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One row of history.csv.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub iteration: u64,
    pub candidates: u64,
    pub feasible: u64,
    pub batch_best_f: f64,
    pub batch_mean_f: f64,
    /// The best confirmed F so far (a map: its best elite's).
    pub best_f: f64,
    pub qd_score: f64,
    pub coverage: f64,
    pub elites: u64,
    pub confirmed: u64,
    pub games: u64,
    pub elapsed_s: f64,
}

pub(super) fn write_history(dir: &Path, h: &[Row]) -> Result<()> {
    crate::drive::history::write(dir, h)
}

impl crate::drive::history::Row for Row {
    const STEP: &'static str = "iteration";

    fn header() -> &'static [&'static str] {
        &[
            "iteration",
            "candidates",
            "feasible",
            "batch_best_f",
            "batch_mean_f",
            "best_f",
            "qd_score",
            "coverage",
            "elites",
            "confirmed",
            "games",
        ]
    }

    fn cells(&self) -> Vec<String> {
        vec![
            self.iteration.to_string(),
            self.candidates.to_string(),
            self.feasible.to_string(),
            format!("{:.5}", self.batch_best_f),
            format!("{:.5}", self.batch_mean_f),
            format!("{:.5}", self.best_f),
            format!("{:.5}", self.qd_score),
            format!("{:.5}", self.coverage),
            self.elites.to_string(),
            self.confirmed.to_string(),
            self.games.to_string(),
        ]
    }

    fn timing(&self) -> (u64, f64) {
        (self.iteration, self.elapsed_s)
    }
}

/// A candidate as a file that `run --params` plays and `verify` checks: the game, the config,
/// every parameter's value, and what the confirmation measured (mean and 95% interval).
pub fn candidate_toml(cfg: &GenerateConfig, setup: &Setup, e: &Elite, title: &str) -> String {
    let ev = &e.eval;
    let play = match &cfg.external {
        // A game in its own process plays the values as its settings' parameters.
        Some(_) => "Play it: the [held] values as [parameters] of a playtest config with the same [external] table".to_string(),
        None => format!("Play it: playforge run {} --params <this file>", cfg.generate.game.display()),
    };
    let header = format!(
        "# playforge generate: {title} of `{}` (algorithm {}, seed {}, iteration {}).\n\
         # Quality F = {:.4}, confirmed over {} games per table; {}.\n\
         # Check it on fresh seeds: playforge verify <this file>. {play}.\n",
        cfg.generate.name,
        cfg.generate.algorithm,
        cfg.generate.seed,
        e.iteration,
        ev.f,
        ev.games,
        if ev.feasible { "feasible".to_string() } else { format!("infeasible: {}", ev.why) },
    );
    let mut w = content::Writer::new(&header, &cfg.generate.game, cfg.generate.turn_order.as_deref());
    w.key("kind", "\"generate\"");
    w.key("quality", &format!("{:.6}", ev.f));
    let held = setup.codec.overrides(&e.x).into_iter().map(|(n, v)| (content::quoted(&n), num(v)));
    w.table(Some("Every declared parameter's value (the genes and the held ones)."), "held", held);
    let genes = setup.codec.genes.iter().zip(&e.x).map(|(g, v)| (content::quoted(&g.name), format!("{v:?}")));
    w.table(Some("The genes in [0, 1], in the order of `params`."), "genes", genes);
    let interval = |est: &super::expr::Estimate| {
        let (lo, hi) = est.ci();
        format!("[{:.4}, {lo:.4}, {hi:.4}", est.mean)
    };
    let measured = cfg.measures.iter().zip(&ev.measures).map(|(m, est)| (m.name.clone(), interval(est) + "]"));
    w.table(Some("Each measure: [mean, 95% low, 95% high] over the confirmation's games."), "measured", measured);
    if !cfg.targets.is_empty() {
        let rows =
            cfg.targets.iter().zip(&ev.targets).enumerate().map(|(k, (t, est))| {
                (content::quoted(&t.expr), format!("{}, {:.4}]", interval(est), setup.scorer.target_score_of(k, est)))
            });
        w.table(Some("Each target's expression: [value, 95% low, 95% high, score]."), "targets", rows);
    }
    if !cfg.descriptors.is_empty() {
        let rows = cfg.descriptors.iter().zip(&ev.descriptors).map(|(d, est)| (content::quoted(&d.expr), interval(est) + "]"));
        w.table(Some("Each descriptor: [value, 95% low, 95% high]."), "descriptors", rows);
    }
    w.finish()
}

pub(super) fn write_outputs(
    cfg: &GenerateConfig,
    setup: &Setup,
    dir: &Path,
    best: Option<&Elite>,
    archive: &Archive,
    history: &[Row],
) -> Result<()> {
    write_history(dir, history)?;
    if let Some(b) = best {
        let what = if cfg.is_map() { "the best elite" } else { "the best candidate" };
        write_atomic(&dir.join("best.toml"), candidate_toml(cfg, setup, b, what).as_bytes())?;
    }
    if cfg.is_map() {
        write_archive(cfg, setup, dir, archive)?;
    }
    if !history.is_empty() {
        convergence_chart(cfg, dir, history)?;
    }
    Ok(())
}

/// The file name of a cell's elite: its bins, `cell-3-7.toml`.
pub fn elite_name(a: &Archive, cell: usize) -> String {
    let b: Vec<String> = a.cell_bins(cell).iter().map(|b| b.to_string()).collect();
    format!("cell-{}.toml", b.join("-"))
}

fn write_archive(cfg: &GenerateConfig, setup: &Setup, dir: &Path, a: &Archive) -> Result<()> {
    let mut header: Vec<String> = vec!["cell".into()];
    for k in 0..a.dims.len() {
        header.push(format!("bin{k}"));
    }
    for d in &cfg.descriptors {
        header.push(d.expr.clone());
    }
    header.extend(["quality".to_string(), "iteration".to_string()]);
    for m in &cfg.measures {
        header.push(m.name.clone());
        header.push(format!("{}_ci95", m.name));
    }
    for g in &setup.codec.genes {
        header.push(g.name.clone());
    }
    let mut rows = Vec::new();
    // Rewrite the elites' folder whole: an elite that was replaced leaves no stale file.
    let elites_dir = dir.join("elites");
    if elites_dir.exists() {
        std::fs::remove_dir_all(&elites_dir)?;
    }
    for (&cell, e) in &a.cells {
        let mut row = vec![cell.to_string()];
        row.extend(a.cell_bins(cell).iter().map(|b| b.to_string()));
        row.extend(e.eval.descriptors.iter().map(|d| format!("{:.4}", d.mean)));
        row.push(format!("{:.5}", e.eval.f));
        row.push(e.iteration.to_string());
        // Evaluations an ask/tell user told may carry no measures: empty cells then.
        for k in 0..cfg.measures.len() {
            match e.eval.measures.get(k) {
                Some(m) => row.extend([format!("{:.4}", m.mean), format!("{:.4}", 1.96 * m.se)]),
                None => row.extend([String::new(), String::new()]),
            }
        }
        row.extend(setup.codec.gene_values(&e.x).iter().map(|(_, v)| num(*v)));
        rows.push(row);
        let bins = a.cell_bins(cell);
        write_atomic(
            &elites_dir.join(elite_name(a, cell)),
            candidate_toml(cfg, setup, e, &format!("the elite of cell {bins:?}")).as_bytes(),
        )?;
    }
    write_atomic(&dir.join("archive.csv"), &csv_bytes(&header, &rows))?;
    let labels: Vec<String> = cfg.descriptors.iter().map(|d| d.expr.clone()).collect();
    let cells: Vec<(Vec<usize>, f64)> = a.cells.iter().map(|(&c, e)| (a.cell_bins(c), e.eval.f)).collect();
    let title = format!("{} — {} (seed {}): quality of each cell's elite", cfg.generate.name, cfg.generate.algorithm, cfg.generate.seed);
    chart::heatmap(&dir.join("archive.png"), &title, &a.dims, &labels, &cells).map_err(|e| anyhow!("archive.png: {e}"))
}

fn convergence_chart(cfg: &GenerateConfig, dir: &Path, h: &[Row]) -> Result<()> {
    use chart::{Panel, Series};
    let pts = |f: &dyn Fn(&Row) -> f64| h.iter().map(|r| (r.games as f64, f(r))).collect::<Vec<_>>();
    let mut panels = vec![Panel {
        title: "quality F".into(),
        x_label: "games played".into(),
        y_label: "F".into(),
        series: vec![
            Series::line("best of the iteration", pts(&|r| r.batch_best_f)),
            Series::line("mean of the iteration", pts(&|r| r.batch_mean_f)),
            Series::line("best so far (confirmed)", pts(&|r| r.best_f)),
        ],
    }];
    if cfg.is_map() {
        panels.push(Panel {
            title: "the map".into(),
            x_label: "games played".into(),
            y_label: "QD-score / coverage %".into(),
            series: vec![
                Series::line("QD-score (Σ F of the elites)", pts(&|r| r.qd_score)),
                Series::line("coverage (% of cells)", pts(&|r| 100.0 * r.coverage)),
            ],
        });
    }
    let title = format!("{} — {} (seed {})", cfg.generate.name, cfg.generate.algorithm, cfg.generate.seed);
    chart::line_panels(&dir.join("convergence.png"), &title, &panels, 1000, 360).map_err(|e| anyhow!("convergence.png: {e}"))
}
