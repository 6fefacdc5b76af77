//! `experiment`: a set of play configurations ("conditions": a base config plus overrides)
//! repeated over many seeds, then compared — mean ± 95% CI per condition, a bar chart, and Welch
//! t-tests between conditions.
//!
//! Results are appended to `results.csv` after every run (atomically), so an interrupted
//! experiment resumes where it stopped (`--resume`) and gives the same numbers with iteration
//! budgets. Runs go one after another by default — time budgets need the machine to themselves
//! to be fair; `jobs > 1` runs seeds in parallel (sensible with iteration budgets only).

use super::config::{ConfigError, PlayConfig};
use super::play::play;
use crate::config::merge;
use crate::exec::{Executor, JobKind};
use crate::report::stats::{Summary, Welch, summary, welch};
use crate::report::{chart, csv_bytes, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    pub experiment: Header,
    #[serde(rename = "condition")]
    pub conditions: Vec<toml::Table>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: crate::config::FolderName,
    /// The play config every condition starts from.
    pub base: PathBuf,
    /// Seeds per condition.
    #[serde(default = "twenty")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000>")]
    pub seeds: u64,
    #[serde(default = "one")]
    pub first_seed: u64,
    #[serde(default = "outputs")]
    pub out: PathBuf,
    /// What to compare: `value` (the result formula) or a result term such as `global.coins`.
    #[serde(default = "value")]
    pub metric: String,
    /// Runs at once (use 1 with time budgets).
    #[serde(default = "one_usize")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 4_096>")]
    pub jobs: usize,
    /// What the thesis reported, printed beside our results.
    #[serde(default)]
    pub thesis: Option<String>,
}

fn twenty() -> u64 {
    20
}
fn one() -> u64 {
    1
}
fn one_usize() -> usize {
    1
}
fn outputs() -> PathBuf {
    PathBuf::from("outputs")
}
fn value() -> String {
    "value".into()
}

/// One finished run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, Deserialize)]
pub struct Run {
    pub condition: String,
    pub seed: u64,
    pub metric: f64,
    pub value: f64,
    pub iterations: u64,
    pub seconds: f64,
}

pub struct Outcome {
    pub dir: PathBuf,
    /// Some condition searches under a wall-clock budget (`budget_ms`): not reproducible.
    pub timed: bool,
    pub header: Header,
    pub summaries: Vec<(String, Summary, f64)>,
    pub tests: Vec<(String, String, Welch)>,
}

/// The resolved config of one condition with one seed.
pub fn condition_config(
    file: &ExperimentFile,
    base: &toml::Table,
    cond: &toml::Table,
    seed: u64,
) -> Result<(String, PlayConfig), ConfigError> {
    let mut over = cond.clone();
    let name = match over.remove("name") {
        Some(toml::Value::String(s)) => s,
        _ => {
            return Err(ConfigError::Invalid {
                path: file.experiment.name.to_string(),
                message: "every [[condition]] needs name = \"…\"".into(),
            });
        }
    };
    let mut t = base.clone();
    // A budget in the overrides replaces the base's budget of the other kind.
    if let Some(toml::Value::Table(os)) = over.get("search")
        && let Some(toml::Value::Table(bs)) = t.get_mut("search")
    {
        if os.contains_key("iterations") {
            bs.remove("budget_ms");
        }
        if os.contains_key("budget_ms") {
            bs.remove("iterations");
        }
    }
    merge(&mut t, &over);
    let mut exp = toml::Table::new();
    exp.insert("seed".into(), toml::Value::Integer(seed as i64));
    exp.insert("name".into(), toml::Value::String(file.experiment.name.to_string()));
    exp.insert("out".into(), toml::Value::String(file.experiment.out.display().to_string()));
    let mut wrap = toml::Table::new();
    wrap.insert("experiment".into(), toml::Value::Table(exp));
    merge(&mut t, &wrap);
    Ok((name.clone(), PlayConfig::from_table(&format!("{} [condition {name}]", file.experiment.name), t)?))
}

pub fn load(path: &Path) -> Result<(ExperimentFile, toml::Table), String> {
    let text = crate::input::read_text(path).map_err(|e| e.to_string())?;
    let mut file: ExperimentFile = crate::config::toml(&path.display().to_string(), &text)?;
    // Paths in a config are relative to the config file; so is the base's game to the base.
    file.experiment.base = crate::config::resolve_path(path, &file.experiment.base);
    if file.conditions.is_empty() {
        return Err(format!("{}: no [[condition]]", path.display()));
    }
    let base_text = crate::input::read_text(&file.experiment.base)
        .map_err(|e| format!("{}: base = {}: {e}", path.display(), file.experiment.base.display()))?;
    let mut base: toml::Table = crate::config::toml(&file.experiment.base.display().to_string(), &base_text)?;
    crate::config::anchor_game(&mut base, "experiment", &file.experiment.base);
    // Resolve every condition now, so a typo fails before hours of runs.
    for c in &file.conditions {
        condition_config(&file, &base, c, file.experiment.first_seed).map_err(|e| e.to_string())?;
    }
    Ok((file, base))
}

/// The runs in results.csv, with their seconds from timing.csv beside it (0 if missing).
fn read_done(path: &Path) -> Vec<Run> {
    let Ok(mut r) = csv::Reader::from_path(path) else { return Vec::new() };
    let mut seconds = std::collections::HashMap::new();
    if let Ok(mut t) = csv::Reader::from_path(path.with_file_name("timing.csv")) {
        for rec in t.records().flatten() {
            if let (Some(c), Some(s), Some(x)) =
                (rec.get(0), rec.get(1).and_then(|s| s.parse::<u64>().ok()), rec.get(2).and_then(|x| x.parse::<f64>().ok()))
            {
                seconds.insert((c.to_string(), s), x);
            }
        }
    }
    r.records()
        .filter_map(|rec| {
            let rec = rec.ok()?;
            let (condition, seed) = (rec.get(0)?.to_string(), rec.get(1)?.parse().ok()?);
            Some(Run {
                seconds: seconds.get(&(condition.clone(), seed)).copied().unwrap_or(0.0),
                condition,
                seed,
                metric: rec.get(2)?.parse().ok()?,
                value: rec.get(3)?.parse().ok()?,
                iterations: rec.get(4)?.parse().ok()?,
            })
        })
        .collect()
}

/// Checks the runs a resumed experiment read back (its checkpoint, results.csv): each is a
/// (condition, seed) of this experiment, and none is there twice; the error names the file,
/// the run and what was expected.
fn check_done(path: &Path, runs: &[Run], planned: &std::collections::BTreeSet<(String, u64)>) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for (k, r) in runs.iter().enumerate() {
        let what = if !planned.contains(&(r.condition.clone(), r.seed)) {
            "is not a run of this experiment; expected a condition and seed of its config"
        } else if !seen.insert((r.condition.clone(), r.seed)) {
            "is there twice; expected each run once"
        } else {
            continue;
        };
        return Err(format!(
            "{}: row {}: condition `{}`, seed {} {what} (delete it or run without --resume)",
            path.display(),
            k + 1,
            r.condition.chars().take(80).collect::<String>(),
            r.seed
        ));
    }
    Ok(())
}

/// results.csv (the numbers, the same on every rerun and resume) and timing.csv (seconds).
fn write_runs(path: &Path, runs: &[Run]) -> std::io::Result<()> {
    let header: Vec<String> = ["condition", "seed", "metric", "value", "iterations"].iter().map(|s| s.to_string()).collect();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| vec![r.condition.clone(), r.seed.to_string(), r.metric.to_string(), r.value.to_string(), r.iterations.to_string()])
        .collect();
    let timing: Vec<Vec<String>> =
        runs.iter().map(|r| vec![r.condition.clone(), r.seed.to_string(), format!("{:.4}", r.seconds)]).collect();
    write_atomic(&path.with_file_name("timing.csv"), &csv_bytes(&["condition", "seed", "seconds"].map(String::from), &timing))?;
    write_atomic(path, &csv_bytes(&header, &rows))
}

/// Plays condition `name`'s config and reads the experiment's `metric` off its report.
pub(crate) fn run_one(metric: &str, name: &str, cfg: &PlayConfig) -> Result<Run, String> {
    let rep = play(cfg).map_err(|e| format!("condition `{name}`, seed {}: {e}", cfg.experiment.seed))?;
    let value = if metric == "value" {
        rep.value
    } else {
        rep.terms
            .iter()
            .find(|t| t.value == metric)
            .map(|t| t.raw)
            .ok_or_else(|| format!("metric `{metric}` is not a result term of condition `{name}`"))?
    };
    Ok(Run {
        condition: name.to_string(),
        seed: cfg.experiment.seed,
        metric: value,
        value: rep.value,
        iterations: rep.iterations,
        seconds: rep.seconds,
    })
}

/// Runs (or resumes) the experiment on `exec`; `progress` is told after every run.
/// `out` replaces the config's output root.
pub fn run(
    path: &Path,
    out: Option<&Path>,
    resume: bool,
    exec: &Executor,
    progress: &(dyn Fn(usize, usize, &str) + Sync),
) -> Result<Outcome, String> {
    let (mut file, base) = load(path)?;
    if let Some(o) = out {
        file.experiment.out = o.to_path_buf();
    }
    let h = &file.experiment;
    let dir = h.out.join(&h.name);
    let results = dir.join("results.csv");
    if resume && !results.exists() {
        return Err(format!(
            "--resume: no results in {}; expected the folder of an interrupted run of this experiment (run without --resume to start afresh)",
            results.display()
        ));
    }
    // Held for the run (a second run on this folder is refused); a fresh run starts empty.
    let run_dir = crate::report::run_dir::RunDir::open(&dir).map_err(|e| e.to_string())?;
    if !resume {
        run_dir.clear().map_err(|e| e.to_string())?;
    }
    let mut runs = if resume { read_done(&results) } else { Vec::new() };
    let mut todo = Vec::new();
    let mut timed = false;
    let mut planned = std::collections::BTreeSet::new();
    for c in &file.conditions {
        for seed in h.first_seed..h.first_seed + h.seeds {
            let (name, cfg) = condition_config(&file, &base, c, seed).map_err(|e| e.to_string())?;
            timed |= cfg.timed();
            if !runs.iter().any(|r| r.condition == name && r.seed == seed) {
                planned.insert((name.clone(), seed));
                todo.push((name, cfg));
            } else {
                planned.insert((name, seed));
            }
        }
    }
    check_done(&results, &runs, &planned)?;
    let total = file.conditions.len() * h.seeds as usize;
    let done = std::sync::Mutex::new((runs.len(), runs.clone()));
    let save = |r: Run| -> Result<(), String> {
        let mut d = done.lock().expect("no panic while holding results");
        d.0 += 1;
        let name = r.condition.clone();
        d.1.push(r);
        write_runs(&results, &d.1).map_err(|e| format!("writing {}: {e}", results.display()))?;
        progress(d.0, total, &name);
        Ok(())
    };
    // In this process one run at a time (or `jobs` at once; wall-clock budgets need the machine
    // to themselves), elsewhere a wave of two runs per CPU, each result saved as it arrives.
    let wire: Vec<RunJob> = todo.iter().map(|(name, cfg)| RunJob::new(name, cfg)).collect::<Result<_, _>>()?;
    crate::drive::grid::run::<ExperimentRun>(
        exec,
        crate::drive::grid::Local::Threads(h.jobs.max(1)),
        || Ok(RunContext { metric: h.metric.clone() }),
        &wire,
        |i, _| run_one(&h.metric, &todo[i].0, &todo[i].1).map_err(|e| anyhow::anyhow!(e)),
        |_, r| save(r).map_err(|e| anyhow::anyhow!(e)),
    )
    .map_err(|e| format!("{e:#}"))?;
    runs = done.into_inner().expect("runs are done").1;
    // Stable order: conditions as declared, seeds ascending.
    let order: Vec<String> = file.conditions.iter().map(|c| c.get("name").and_then(|v| v.as_str()).unwrap_or("").to_string()).collect();
    runs.sort_by_key(|r| (order.iter().position(|o| *o == r.condition).unwrap_or(usize::MAX), r.seed));
    write_runs(&results, &runs).map_err(|e| e.to_string())?;
    summarize(&dir, file.experiment.clone(), &order, &runs, timed)
}

fn summarize(dir: &Path, header: Header, order: &[String], runs: &[Run], timed: bool) -> Result<Outcome, String> {
    let io = |e: std::io::Error| format!("writing {}: {e}", dir.display());
    let mut summaries = Vec::new();
    for name in order {
        let xs: Vec<f64> = runs.iter().filter(|r| &r.condition == name).map(|r| r.metric).collect();
        let its: Vec<f64> = runs.iter().filter(|r| &r.condition == name).map(|r| r.iterations as f64).collect();
        let secs: f64 = runs.iter().filter(|r| &r.condition == name).map(|r| r.seconds).sum();
        let it_per_s = if secs > 0.0 { its.iter().sum::<f64>() / secs } else { 0.0 };
        summaries.push((name.clone(), summary(&xs), it_per_s));
    }
    let mut tests = Vec::new();
    for i in 0..order.len() {
        for j in i + 1..order.len() {
            let a: Vec<f64> = runs.iter().filter(|r| r.condition == order[i]).map(|r| r.metric).collect();
            let b: Vec<f64> = runs.iter().filter(|r| r.condition == order[j]).map(|r| r.metric).collect();
            if let Some(w) = welch(&a, &b) {
                tests.push((order[i].clone(), order[j].clone(), w));
            }
        }
    }
    let header_row: Vec<String> = ["condition", "n", "mean", "sd", "ci95_low", "ci95_high"].iter().map(|s| s.to_string()).collect();
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|(n, s, _)| {
            vec![
                n.clone(),
                s.n.to_string(),
                s.mean.to_string(),
                s.sd.to_string(),
                (s.mean - s.ci95).to_string(),
                (s.mean + s.ci95).to_string(),
            ]
        })
        .collect();
    write_atomic(&dir.join("summary.csv"), &csv_bytes(&header_row, &rows)).map_err(io)?;
    write_atomic(&dir.join("welch.md"), markdown_tests(&tests).as_bytes()).map_err(io)?;
    let bars: Vec<chart::Bar> = summaries
        .iter()
        .map(|(n, s, _)| chart::Bar { label: n.clone(), mean: s.mean, half_width: if s.ci95.is_finite() { s.ci95 } else { 0.0 } })
        .collect();
    let title =
        format!("{} — mean {} ± 95% CI (seeds {}–{})", header.name, header.metric, header.first_seed, header.first_seed + header.seeds - 1);
    chart::bars(&dir.join("chart.png"), &title, &header.metric, &bars, 140 * bars.len().max(4) as u32 + 200, 520)
        .map_err(|e| format!("drawing chart.png: {e}"))?;
    Ok(Outcome { dir: dir.to_path_buf(), timed, header, summaries, tests })
}

/// The summary as a markdown table.
pub fn markdown_summary(o: &Outcome) -> String {
    let mut s = format!("| condition | n | mean {m} | 95% CI | sd | iterations/s |\n|---|---:|---:|---:|---:|---:|\n", m = o.header.metric);
    for (name, x, ips) in &o.summaries {
        s.push_str(&format!("| {name} | {} | {:.4} | ± {:.4} | {:.4} | {:.0} |\n", x.n, x.mean, x.ci95, x.sd, ips));
    }
    if o.timed {
        s.push_str(&format!("\n{}\n", crate::experiment::config::NOT_REPRODUCIBLE));
    }
    s
}

pub fn markdown_tests(tests: &[(String, String, Welch)]) -> String {
    let mut s = String::from("| A | B | t | df | p (two-sided) | p (A > B) |\n|---|---|---:|---:|---:|---:|\n");
    for (a, b, w) in tests {
        s.push_str(&format!("| {a} | {b} | {:.3} | {:.1} | {:.4} | {:.4} |\n", w.t, w.df, w.p_two_sided, w.p_greater));
    }
    s
}

// The job kind `experiment.run`: one play configuration (a condition on one seed, its game
// path absolute) played to its report; its output the run's row. The context is the
// experiment's metric.

/// What every run of an experiment shares: the metric read off each report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunContext {
    pub metric: String,
}

/// One condition on one seed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunJob {
    pub name: String,
    /// The condition's resolved play config (its game path absolute).
    pub config: PlayConfig,
}

impl RunJob {
    pub fn new(name: &str, cfg: &PlayConfig) -> Result<RunJob, String> {
        let mut config = cfg.clone();
        config.experiment.game =
            std::path::absolute(&cfg.experiment.game).map_err(|e| format!("{}: {e}", cfg.experiment.game.display()))?;
        Ok(RunJob { name: name.to_string(), config })
    }
}

/// One experiment run (`experiment.run`).
pub struct ExperimentRun;

impl JobKind for ExperimentRun {
    const NAME: &'static str = "experiment.run";
    type Context = RunContext;
    type Worker = RunContext;
    type Job = RunJob;
    type Output = Run;

    fn worker(ctx: &RunContext) -> anyhow::Result<RunContext> {
        Ok(ctx.clone())
    }

    fn run(ctx: &RunContext, job: &RunJob) -> anyhow::Result<Run> {
        run_one(&ctx.metric, &job.name, &job.config).map_err(|e| anyhow::anyhow!(e))
    }
}
