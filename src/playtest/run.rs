//! The playtest runner (Monster Carlo, Keehl 2018): for every condition (search × style ×
//! variant) and replicate, one MCTS search over the whole game from its start, with the game's
//! chance fixed by the replicate's seed (the thesis's determinization), raw-score rewards, and
//! the highest score seen recorded after every rollout. Each finished replicate is written at
//! once (`outputs/<name>/seed-<seed>/runs/<condition>/rep-NN.json`, atomically), which is the checkpoint:
//! `resume` skips replicates already on disk for the same config and game. The reports
//! (curves, finals, Mann-Whitney table, two-panel chart, best traces) are built from those files.
//!
//! A game of two or more sides (`players a b`) is played instead of searched: a replicate is one
//! self-play game ([`super::selfplay`]), and the reports are its win rates.
//!
//! Determinism: replicate r of a condition depends only on (seed, r, the condition's name), so
//! any number of threads, any order and any resume give the same numbers.

use super::jobs::{Done, PlaytestContext, PlaytestReplicate, ReplicateJob, run_replicate};
use super::selfplay;
use super::setup::{Condition, Outcome, Replicate, Setup, fmt_num};
use crate::exec::Executor;
use crate::report::chart;
use crate::report::stats::{mann_whitney, median, summary};
use crate::report::{csv_bytes, write_atomic};
use anyhow::{Context, Result, anyhow};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs every replicate not yet on disk (all of them unless `resume`), writing each as it
/// finishes; then loads them all. `only` limits the run to some conditions (indices).
pub fn run_playtest(setup: &Setup, resume: bool, progress: &AtomicU64) -> Result<Outcome> {
    let s = &setup.cfg.playtest;
    if !resume {
        let runs = setup.out_dir.join("runs");
        if runs.exists() {
            std::fs::remove_dir_all(&runs).with_context(|| format!("cannot clear {}", runs.display()))?;
        }
    }
    let mut jobs = Vec::new();
    for (ci, c) in setup.conditions.iter().enumerate() {
        for r in 0..s.replicates {
            match load_rep(setup, c, r)? {
                Some(_) => {
                    progress.fetch_add(s.rollouts, Ordering::Relaxed);
                }
                None => jobs.push((ci, r)),
            }
        }
    }
    let save = |ci: usize, done: &Done| -> Result<()> {
        let path = setup.rep_path(&setup.conditions[ci], done.rep.replicate);
        let bytes = serde_json::to_vec(&done.rep)?;
        write_atomic(&path.with_extension("seconds"), format!("{:.3}\n", done.seconds).as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
        write_atomic(&path, &bytes).with_context(|| format!("cannot write {}", path.display()))
    };
    let jobs: Vec<ReplicateJob> = jobs.into_iter().map(|(condition, replicate)| ReplicateJob { condition, replicate }).collect();
    // Here every replicate is written as it finishes; elsewhere a wave of them at a time
    // (`drive::grid`), counted in the progress as the wave comes back.
    let local = matches!(setup.exec, Executor::Local);
    crate::drive::grid::run::<PlaytestReplicate>(
        &setup.exec,
        crate::drive::grid::Local::Parallel,
        || PlaytestContext::new(setup, &setup.config_path, &setup.text),
        &jobs,
        |_, j| {
            let rep = run_replicate(setup, &setup.conditions[j.condition], j.replicate, progress)?;
            Ok(rep.map(|rep| Done { seconds: rep.seconds, rep }))
        },
        |i, done: Option<Done>| match done {
            Some(d) => {
                if !local {
                    progress.fetch_add(s.rollouts, Ordering::Relaxed);
                }
                save(jobs[i].condition, &d)
            }
            None => Ok(()),
        },
    )?;
    let interrupted = crate::drive::stop::requested();
    let mut reps = Vec::new();
    for c in &setup.conditions {
        let mut list = Vec::new();
        for r in 0..s.replicates {
            if let Some(rep) = load_rep(setup, c, r)? {
                list.push(rep);
            }
        }
        reps.push(list);
    }
    Ok(Outcome { reps, interrupted })
}

/// The largest replicate file read back: 256 MiB (a replicate holds its improvements and its
/// best trace, a few megabytes for the longest runs tried).
pub const MAX_REPLICATE_BYTES: u64 = 256 << 20;

/// A replicate's file, if it exists and belongs to this config and game; checked
/// ([`Replicate::validate`]) before it is used.
fn load_rep(setup: &Setup, c: &Condition, r: u64) -> Result<Option<Replicate>> {
    let path = setup.rep_path(c, r);
    if !path.exists() {
        return Ok(None);
    }
    let text = crate::input::read_text_within(&path, MAX_REPLICATE_BYTES)
        .map_err(|e| anyhow!("{e}; expected a replicate playforge wrote (delete it to run it again)"))?;
    let mut rep: Replicate =
        serde_json::from_str(&text).with_context(|| format!("{} is damaged; delete it to run it again", path.display()))?;
    rep.seconds = std::fs::read_to_string(path.with_extension("seconds")).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0.0);
    if !((rep.key == setup.key || setup.legacy_keys.contains(&rep.key)) && rep.replicate == r) {
        return Ok(None);
    }
    rep.validate(&path, setup, c)?;
    rep.key = setup.key.clone();
    Ok(Some(rep))
}

impl Replicate {
    /// Checks a replicate read back (the playtest's checkpoint) against its condition: its
    /// name, its chance seed, rollouts within the budget, improvements at rising rollouts
    /// within them with finite rising scores. The error names
    /// `path`, the field and what was expected.
    pub fn validate(&self, path: &Path, setup: &Setup, c: &Condition) -> Result<()> {
        let bad = |what: String| anyhow!(crate::report::run_dir::bad_checkpoint(path, &what));
        if !setup.sides.is_empty() {
            return selfplay::validate(self, path, setup, c);
        }
        let budget = setup.cfg.playtest.rollouts;
        if self.condition != c.name {
            return Err(bad(format!("condition = \"{}\"; expected \"{}\"", self.condition, c.name)));
        }
        let seed = setup.game_seed(self.replicate);
        if self.game_seed != seed {
            return Err(bad(format!("game_seed = {}; expected {seed} (the replicate's)", self.game_seed)));
        }
        if self.rollouts > budget {
            return Err(bad(format!("rollouts = {}; expected at most {budget} (the config's)", self.rollouts)));
        }
        let mut last = (0u64, f64::NEG_INFINITY);
        for (k, &(at, v)) in self.improvements.iter().enumerate() {
            if at <= last.0 || at > self.rollouts || !v.is_finite() || v <= last.1 {
                return Err(bad(format!(
                    "improvements[{k}] = ({at}, {v}); expected rising rollouts in 1..={} with rising finite scores",
                    self.rollouts
                )));
            }
            last = (at, v);
        }
        Ok(())
    }
}

/// One row of the summary.
pub struct ConditionSummary {
    pub name: String,
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub exhausted: usize,
}

/// Writes `curves/<condition>.csv`, finals.csv, timing.csv, mann_whitney.csv, summary.md,
/// playtest.png and `best/<condition>.moves`; returns the summary rows and the summary's text.
pub fn write_reports(setup: &Setup, out: &Outcome) -> Result<(Vec<ConditionSummary>, String)> {
    if !setup.sides.is_empty() {
        return Ok((Vec::new(), selfplay::write_reports(setup, out)?));
    }
    let s = &setup.cfg.playtest;
    let dir = &setup.out_dir;
    let n = s.rollouts;
    let mut rows = Vec::new();
    let mut finals_rows = Vec::new();
    let mut timing_rows: Vec<Vec<String>> = Vec::new();
    let mut chart_conds = Vec::new();
    let mut bound_hits = Vec::new();
    for (c, reps) in setup.conditions.iter().zip(&out.reps) {
        // Curves: rollout, one column per replicate.
        let curves: Vec<Vec<f64>> = reps.iter().map(|r| r.curve(n)).collect();
        let mut header = vec!["rollout".to_string()];
        header.extend(reps.iter().map(|r| format!("rep{:02}", r.replicate + 1)));
        let csv_rows: Vec<Vec<String>> =
            (0..n as usize).map(|i| std::iter::once((i + 1).to_string()).chain(curves.iter().map(|cv| fmt_num(cv[i]))).collect()).collect();
        write_atomic(&dir.join("curves").join(format!("{}.csv", c.file)), &csv_bytes(&header, &csv_rows))?;
        let finals: Vec<f64> = reps.iter().map(|r| r.best).collect();
        for r in reps {
            finals_rows.push(vec![
                c.name.clone(),
                (r.replicate + 1).to_string(),
                r.game_seed.to_string(),
                fmt_num(r.best),
                r.rollouts.to_string(),
                r.exhausted.to_string(),
                r.nodes.to_string(),
            ]);
            timing_rows.push(vec![c.name.clone(), (r.replicate + 1).to_string(), format!("{:.2}", r.seconds)]);
            if let Some(b) = s.upper_bound
                && r.best > b
            {
                bound_hits.push(format!("{} replicate {} scored {} > upper bound {b}", c.name, r.replicate + 1, fmt_num(r.best)));
            }
        }
        // Chart: mean ± sd of best-so-far at up to 400 evenly spaced rollouts.
        let step = (n / 400).max(1);
        let mut curve = Vec::new();
        let mut i = step;
        while i <= n {
            let xs: Vec<f64> = curves.iter().map(|cv| cv[i as usize - 1]).filter(|x| x.is_finite()).collect();
            if !xs.is_empty() {
                let sm = summary(&xs);
                curve.push((i as f64, sm.mean, sm.mean - sm.sd, sm.mean + sm.sd));
            }
            i += step;
        }
        chart_conds.push(chart::Condition { name: c.name.clone(), finals: finals.clone(), curve });
        let sm = summary(&finals);
        rows.push(ConditionSummary {
            name: c.name.clone(),
            n: finals.len(),
            mean: sm.mean,
            sd: sm.sd,
            median: median(&finals),
            min: finals.iter().copied().fold(f64::INFINITY, f64::min),
            max: finals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            exhausted: reps.iter().filter(|r| r.exhausted).count(),
        });
        // The best trace of the condition (first replicate among equals).
        if let Some(best) = reps.iter().max_by(|a, b| a.best.total_cmp(&b.best).then(b.replicate.cmp(&a.replicate))) {
            // An external game's line is its choices, sent as an episode's prefix; a WGDL
            // game's, moves that `playforge run` replays.
            let (seed_word, replay, ext) = if setup.cfg.external.is_some() {
                let prefix: Vec<&str> = best.trace.iter().map(|t| t.split(' ').next().unwrap_or("")).collect();
                let replay = format!(
                    "an episode with this seed, these settings and the prefix [{}]\n// each line: the choice and the number of options",
                    prefix.join(", ")
                );
                ("seed", replay, "trace")
            } else {
                let replay = format!(
                    "playforge run {} --moves <this file> --chance-seed {}{}{}",
                    setup.game_path.display(),
                    best.game_seed,
                    c.overlays.iter().map(|o| format!(" --overlay {o}")).collect::<String>(),
                    c.params.iter().map(|(k, x)| format!(" --set {k}={x}")).collect::<String>(),
                );
                ("chance seed", replay, "moves")
            };
            let mut text = format!(
                "// {}: best of {} replicates, score {} (replicate {}, {seed_word} {})\n// {}\n// replay: {replay}\n",
                c.name,
                reps.len(),
                fmt_num(best.best),
                best.replicate + 1,
                best.game_seed,
                c.describe,
            );
            for m in &best.trace {
                text.push_str(m);
                text.push('\n');
            }
            write_atomic(&dir.join("best").join(format!("{}.{ext}", c.file)), text.as_bytes())?;
        }
    }
    write_atomic(
        &dir.join("finals.csv"),
        &csv_bytes(&["condition", "replicate", "game_seed", "best", "rollouts", "exhausted", "nodes"].map(String::from), &finals_rows),
    )?;
    // The wall clock apart: finals.csv is the same on every rerun and resume; this is not.
    write_atomic(&dir.join("timing.csv"), &csv_bytes(&["condition", "replicate", "seconds"].map(String::from), &timing_rows))?;
    // Pairwise Mann-Whitney U on the final best scores.
    let mut mw_rows = Vec::new();
    let mut mw_md = String::new();
    for i in 0..rows.len() {
        for j in i + 1..rows.len() {
            let a: Vec<f64> = out.reps[i].iter().map(|r| r.best).collect();
            let b: Vec<f64> = out.reps[j].iter().map(|r| r.best).collect();
            let Some(t) = mann_whitney(&a, &b) else { continue };
            let higher = if rows[i].median >= rows[j].median { &rows[i].name } else { &rows[j].name };
            mw_rows.push(vec![
                rows[i].name.clone(),
                rows[j].name.clone(),
                format!("{}", t.u),
                format!("{:.3}", t.z),
                format!("{:.3e}", t.p_two_sided),
                t.exact.to_string(),
                higher.clone(),
            ]);
            let _ = writeln!(
                mw_md,
                "| {} vs {} | {} | {:.2} | {:.2e}{} | {} |",
                rows[i].name,
                rows[j].name,
                t.u,
                t.z,
                t.p_two_sided,
                if t.exact { " (exact)" } else { "" },
                higher
            );
        }
    }
    write_atomic(
        &dir.join("mann_whitney.csv"),
        &csv_bytes(&["a", "b", "u_a", "z", "p_two_sided", "exact", "higher_median"].map(String::from), &mw_rows),
    )?;
    let title = format!("{}: {} replicates × {} rollouts (seed {})", s.name, s.replicates, n, s.seed);
    chart::experiment_panels(&dir.join("playtest.png"), &title, &format!("highest {} seen", s.score), &chart_conds, 1500, 620)
        .map_err(|e| anyhow!("cannot draw {}: {e}", dir.join("playtest.png").display()))?;
    // summary.md
    let mut md = format!(
        "# Playtest `{}`\n\nGame `{}`, score `{}`; {} replicates × {} rollouts; seed {}; chance seed {}.\n\n",
        s.name,
        setup.game_path.display(),
        s.score,
        s.replicates,
        n,
        s.seed,
        if s.game_seed == "shared" { "shared by every search" } else { "one per replicate, the same in every condition" }
    );
    md.push_str("| condition | replicates | mean best | sd | median | min | max | exhausted (CUT_OFF) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &rows {
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
            r.name,
            r.n,
            r.mean,
            r.sd,
            fmt_num(r.median),
            fmt_num(r.min),
            fmt_num(r.max),
            r.exhausted
        );
    }
    let failed: Vec<(&str, &crate::bridge::tree::Failure, usize)> = setup
        .conditions
        .iter()
        .zip(&out.reps)
        .filter_map(|(c, reps)| {
            let n: usize = reps.iter().map(|r| r.failures.len()).sum();
            reps.iter().flat_map(|r| r.failures.first()).next().map(|f| (c.name.as_str(), f, n))
        })
        .collect();
    if !failed.is_empty() {
        md.push_str("\nRollouts that ended without an outcome (after their retries; each in its replicate's file):\n\n");
        for (name, f, n) in failed {
            let _ = writeln!(md, "- {name}: {n}; the first, rollout {} (prefix {:?}): {}", f.rollout, f.prefix, f.reason);
        }
    }
    let mut order: Vec<&ConditionSummary> = rows.iter().collect();
    order.sort_by(|a, b| b.mean.total_cmp(&a.mean));
    let _ = writeln!(md, "\nOrdering by mean: {}\n", order.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(" > "));
    md.push_str(
        "## Mann-Whitney U (two-sided, final best scores)\n\n| pair | U (first) | z | p | higher median |\n|---|---:|---:|---:|---|\n",
    );
    md.push_str(&mw_md);
    md.push_str("\n## Conditions\n\n");
    for c in &setup.conditions {
        let _ = writeln!(md, "- **{}**: {}", c.name, c.describe);
    }
    if let Some(b) = s.upper_bound {
        if bound_hits.is_empty() {
            let _ = writeln!(md, "\nNo search beat the upper bound {b}.");
        } else {
            let _ = writeln!(md, "\n**Possible bug: scores above the upper bound {b}**\n");
            for h in &bound_hits {
                let _ = writeln!(md, "- {h}");
            }
        }
    }
    md.push_str(if setup.cfg.external.is_some() {
        "\nFiles: curves/<condition>.csv (highest score seen after each rollout, one column per replicate), finals.csv, mann_whitney.csv, playtest.png, best/<condition>.trace (the best line's choices, an episode's prefix), runs/ (one file per replicate: the checkpoint).\n"
    } else {
        "\nFiles: curves/<condition>.csv (highest score seen after each rollout, one column per replicate), finals.csv, mann_whitney.csv, playtest.png, best/<condition>.moves (the best trace, replayable with `playforge run`), runs/ (one file per replicate: the checkpoint).\n"
    });
    write_atomic(&dir.join("summary.md"), md.as_bytes())?;
    Ok((rows, md))
}
