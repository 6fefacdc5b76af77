//! `playforge verify` of generated content: a `best.toml` or an elite's file (or a whole run
//! folder: every elite of its map) played afresh, `verify_games` games per table on seeds no
//! search used, and each measure, target, requirement and descriptor reported with its 95%
//! interval. A target *holds* when its estimate lies in its band; it is *certain* when the
//! whole interval does. Content passes when it is feasible (every requirement's estimate within
//! its bounds, the games ending) and every band target holds.

use super::config::GenerateConfig;
use super::jobs::{GenerateContext, Setup};
use super::quality::{Eval, in_band};
use super::run::{Games, VERIFY};
use crate::drive::content::Content;
use crate::exec::Executor;
use crate::report::{csv_bytes, write_atomic};
use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};

/// One verified file.
pub struct Checked {
    pub file: PathBuf,
    pub eval: Eval,
    /// Per target: (holds, certain).
    pub targets: Vec<(bool, bool)>,
    pub pass: bool,
    /// The quality the search's confirmation gave it.
    pub searched_quality: Option<f64>,
}

pub struct Report {
    pub checked: Vec<Checked>,
    pub markdown: String,
    pub dir: PathBuf,
}

/// Whether `path` is generated content (a file with `kind = "generate"`, or a run folder of
/// `playforge generate`), as opposed to a balance encounter.
pub fn is_generated(path: &Path) -> bool {
    if path.is_dir() {
        let cfg = crate::input::read_text(&path.join("config.toml")).ok().and_then(|t| toml::from_str::<toml::Table>(&t).ok());
        return cfg.is_some_and(|t| t.contains_key("generate"));
    }
    Content::read(path).is_ok_and(|c| c.is_generated())
}

/// The files to check under `path`: itself, or a run folder's elites (or its best.toml).
fn files(path: &Path) -> Result<(Vec<PathBuf>, PathBuf)> {
    if !path.is_dir() {
        return Ok((vec![path.to_path_buf()], path.parent().unwrap_or(Path::new(".")).to_path_buf()));
    }
    let elites = path.join("elites");
    let mut out: Vec<PathBuf> = if elites.is_dir() {
        std::fs::read_dir(&elites)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect()
    } else {
        vec![path.join("best.toml")]
    };
    out.sort();
    out.retain(|p| p.exists());
    if out.is_empty() {
        bail!(
            "{}: no elites/*.toml and no best.toml: the run has confirmed no feasible content yet (see its history.csv); expected a run that found some (a larger budget, or looser requirements)",
            path.display()
        );
    }
    Ok((out, path.to_path_buf()))
}

/// The config a generated file belongs to: its run folder's config.toml.
fn config_of(file: &Path) -> Result<PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d.join("config.toml").exists() && d.join("checkpoint.json").exists() {
            return Ok(d.join("config.toml"));
        }
        dir = d.parent();
    }
    bail!(
        "{}: no config.toml of its run beside it or above it; expected a file inside a `playforge generate` run folder (or pass --config)",
        file.display()
    )
}

/// The search vector a file holds (`[genes]`, in the codec's order).
fn genes_of(file: &Path, setup: &Setup) -> Result<(Vec<f64>, Option<f64>)> {
    let c = Content::read(file)?;
    let genes = c
        .table
        .get("genes")
        .and_then(|g| g.as_table())
        .ok_or_else(|| anyhow!("{}: no [genes] table; expected a file `playforge generate` wrote", file.display()))?;
    let x = setup
        .codec
        .genes
        .iter()
        .map(|g| {
            genes
                .get(&g.name)
                .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                .filter(|v| (0.0..=1.0).contains(v))
                .ok_or_else(|| {
                    anyhow!("{}: [genes] \"{}\" is missing or not in [0, 1]; expected every gene of the config", file.display(), g.name)
                })
        })
        .collect::<Result<Vec<f64>>>()?;
    Ok((x, c.number("quality")))
}

/// Verifies a file or a run folder; `games` overrides the config's `verify_games`.
pub fn verify(
    path: &Path,
    config: Option<&Path>,
    games: Option<u64>,
    seed: u64,
    exec: &Executor,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Report> {
    let (list, dir) = files(path)?;
    let cfg_path = match config {
        Some(c) => c.to_path_buf(),
        None => config_of(&list[0])?,
    };
    let (cfg, text) = GenerateConfig::load(&cfg_path)?;
    let mut setup = Setup::new(&cfg, &cfg_path, &text)?;
    // On fresh seeds content is judged by its estimates (a `certain` requirement's interval is
    // the search's stricter test).
    setup.scorer = setup.loose.clone();
    let ctx = GenerateContext::new(&cfg, &cfg_path, &text, &setup.codec)?;
    let games_n = games.unwrap_or(cfg.generate.verify_games);
    let runner = Games { setup: &setup, exec, ctx: &ctx, seed, hook: None };
    let tables = setup.tables().len() as u64;
    let total = list.len() as u64 * games_n * tables;
    let mut checked = Vec::new();
    for (k, file) in list.iter().enumerate() {
        let (x, searched_quality) = genes_of(file, &setup)?;
        if setup.codec.build(&x)?.is_none() {
            bail!("{}: the content breaks a constraint of the config or the game; expected valid content", file.display());
        }
        let eval = runner.evaluate(VERIFY, &[(x, k as u64)], games_n as usize, true)?.remove(0);
        let targets: Vec<(bool, bool)> = cfg
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if t.direction.is_some() {
                    return (true, true);
                }
                let est = eval.targets[i];
                let (lo, hi) = est.ci();
                (setup.scorer.target_met(i, est.mean), in_band(lo, t.at_least, t.at_most) && in_band(hi, t.at_least, t.at_most))
            })
            .collect();
        let pass = eval.feasible && targets.iter().all(|t| t.0);
        checked.push(Checked { file: file.clone(), eval, targets, pass, searched_quality });
        progress((k as u64 + 1) * games_n * tables, total);
    }
    let markdown = markdown(&cfg, &checked, games_n, seed);
    write_atomic(&dir.join("verify.md"), markdown.as_bytes())?;
    let mut header = vec!["file".to_string(), "pass".into(), "feasible".into(), "quality".into(), "searched_quality".into()];
    for m in &cfg.measures {
        header.extend([m.name.clone(), format!("{}_low", m.name), format!("{}_high", m.name)]);
    }
    for t in &cfg.targets {
        header.extend([t.expr.clone(), format!("{} holds", t.expr), format!("{} certain", t.expr)]);
    }
    let rows: Vec<Vec<String>> = checked
        .iter()
        .map(|c| {
            let mut r = vec![
                c.file.file_name().map_or(String::new(), |f| f.to_string_lossy().into()),
                c.pass.to_string(),
                c.eval.feasible.to_string(),
                format!("{:.4}", c.eval.f),
                c.searched_quality.map_or(String::new(), |q| format!("{q:.4}")),
            ];
            for m in &c.eval.measures {
                let (lo, hi) = m.ci();
                r.extend([format!("{:.4}", m.mean), format!("{lo:.4}"), format!("{hi:.4}")]);
            }
            for (e, (holds, certain)) in c.eval.targets.iter().zip(&c.targets) {
                r.extend([format!("{:.4}", e.mean), holds.to_string(), certain.to_string()]);
            }
            r
        })
        .collect();
    write_atomic(&dir.join("verify.csv"), &csv_bytes(&header, &rows))?;
    Ok(Report { checked, markdown, dir })
}

fn interval(e: &super::expr::Estimate) -> String {
    let (lo, hi) = e.ci();
    format!("{:.1} [{lo:.1}, {hi:.1}]", e.mean)
}

fn band(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(a), Some(b)) => format!("{a} … {b}"),
        (Some(a), None) => format!("≥ {a}"),
        (None, Some(b)) => format!("≤ {b}"),
        (None, None) => String::new(),
    }
}

fn markdown(cfg: &GenerateConfig, checked: &[Checked], games: u64, seed: u64) -> String {
    let mut s = format!(
        "# Verification of `{}` ({}): {games} games per table on fresh seeds (seed {seed})\n\n",
        cfg.generate.name, cfg.generate.algorithm
    );
    let passed = checked.iter().filter(|c| c.pass).count();
    s.push_str(&format!("{passed} of {} pass (feasible, every band target's estimate in its band).\n\n", checked.len()));
    for c in checked {
        let name = c.file.file_name().map_or(String::new(), |f| f.to_string_lossy().into());
        s.push_str(&format!(
            "## {name}: {}\n\nquality {:.4} (the search's confirmation: {}); {}\n\n",
            if c.pass { "pass" } else { "FAIL" },
            c.eval.f,
            c.searched_quality.map_or("—".into(), |q| format!("{q:.4}")),
            if c.eval.feasible { "feasible".to_string() } else { format!("infeasible: {}", c.eval.why) }
        ));
        s.push_str("| measure | mean [95% CI] |\n|---|---|\n");
        for (m, e) in cfg.measures.iter().zip(&c.eval.measures) {
            s.push_str(&format!("| {} | {} |\n", m.name, interval(e)));
        }
        if !cfg.targets.is_empty() {
            s.push_str("\n| target | value [95% CI] | band | holds | certain |\n|---|---|---|---|---|\n");
            for ((t, e), (holds, certain)) in cfg.targets.iter().zip(&c.eval.targets).zip(&c.targets) {
                let b = match &t.direction {
                    Some(d) => format!("{d} over {:?}", t.scale.unwrap_or_default()),
                    None => band(t.at_least, t.at_most),
                };
                s.push_str(&format!(
                    "| `{}` | {} | {b} | {} | {} |\n",
                    t.expr,
                    interval(e),
                    if *holds { "yes" } else { "no" },
                    if *certain { "yes" } else { "no" }
                ));
            }
        }
        if !cfg.descriptors.is_empty() {
            s.push_str("\n| descriptor | value [95% CI] |\n|---|---|\n");
            for (d, e) in cfg.descriptors.iter().zip(&c.eval.descriptors) {
                s.push_str(&format!("| `{}` | {} |\n", d.expr, interval(e)));
            }
        }
        s.push('\n');
    }
    s
}
