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

use super::config::PlaytestConfig;
use super::encode::{EState, Encoded};
use super::jobs::{Done, PlaytestContext, PlaytestReplicate, ReplicateJob};
use super::selfplay::{self, Played};
use crate::exec::Executor;
use crate::game::{Game, WgdlGame};
use crate::report::chart;
use crate::report::stats::{mann_whitney, median, summary};
use crate::report::{csv_bytes, write_atomic};
use crate::rng;
use crate::search::formula::Formula;
use crate::search::mcts::{self, Budget, Evaluator, MctsConfig, Rollout, SubGame};
use crate::wgdl::probe::ValueRef;
use crate::wgdl::{CompileOptions, Program, State};
use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Set by Ctrl-C: searches in flight stop, are discarded, and the run returns.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// One experimental condition, compiled.
pub struct Condition {
    pub name: String,
    /// The name as a file name ("lazy-regular").
    pub file: String,
    pub game: Encoded<WgdlGame>,
    /// The score searched; `None` in a game of sides, where a self-play game records wins.
    pub score: Option<ValueRef>,
    pub mcts: MctsConfig,
    /// What the condition is, for the summary: overlays, parameters, encoding, c, weights.
    pub describe: String,
    /// Where the condition's random streams come from (a hash of its full name).
    pub stream: u64,
    pub overlays: Vec<String>,
    pub params: Vec<(String, f64)>,
}

/// Everything a run needs.
pub struct Setup {
    pub cfg: PlaytestConfig,
    pub out_dir: PathBuf,
    pub conditions: Vec<Condition>,
    /// A hash of the resolved config and the game's text: replicate files from another config
    /// are not reused.
    pub key: String,
    /// The key older versions wrote (the resolved config with its paths as given): their
    /// replicate files are still this run's.
    pub legacy_key: String,
    pub game_path: PathBuf,
    /// The config's path and text (for jobs sent elsewhere).
    pub config_path: PathBuf,
    pub text: String,
    /// Where the replicates run (this process by default; `--ray` elsewhere).
    pub exec: Executor,
    /// The game's sides when it has two or more (`players a b`): then every replicate is one
    /// self-play game ([`super::selfplay`]); empty for a one-player game.
    pub sides: Vec<String>,
}

/// The raw score as the search's reward.
struct RawScore<'a> {
    program: &'a Program,
    score: ValueRef,
}

impl Evaluator<EState<State>> for RawScore<'_> {
    fn value(&self, s: &EState<State>, _player: usize) -> f64 {
        self.program.read(&s.st, self.score)
    }
}

/// FNV-1a, for stable names → numbers (stream ids, config keys).
pub fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

impl Setup {
    /// Compiles one program per condition and checks every name the config uses against the
    /// game. `text` is the config's text (for error locations and the key).
    pub fn new(cfg: PlaytestConfig, text: &str, config_path: &Path, out_root: &Path) -> Result<Setup> {
        let at = |table: &str, nth: usize, key: &str| crate::config::locate(config_path, text, table, nth, key);
        let s = &cfg.playtest;
        let game_path = s.game.clone();
        let base_dir = game_path.parent().map(Path::to_path_buf);
        let game_text = crate::input::read_text(&game_path).map_err(|e| anyhow!("{}: game: {e}", at("playtest", 0, "game")))?;
        let name = game_path.display().to_string();
        let plain = CompileOptions { base_dir: base_dir.clone(), ..CompileOptions::default() };
        let probe = crate::wgdl::compile_str_with(&name, &game_text, &plain).map_err(|e| anyhow!("{e}"))?.program;
        let declared = |n: &str| probe.overlays.iter().any(|(_, d)| d == n);
        let overlays_of = |table: &str, k: usize, name: &str, given: &Option<Vec<String>>| -> Result<Vec<String>> {
            match given {
                None => Ok(if declared(name) { vec![name.to_string()] } else { Vec::new() }),
                Some(list) => {
                    for o in list {
                        if !declared(o) {
                            let known: Vec<String> = probe.overlays.iter().map(|(k, n)| format!("{} {n}", k.word())).collect();
                            bail!(
                                "{}: overlay \"{o}\" is not in {}; expected one of: {}",
                                at(table, k, "overlays"),
                                game_path.display(),
                                if known.is_empty() { "(the file declares no `style`/`variant` lines)".into() } else { known.join(", ") }
                            );
                        }
                    }
                    Ok(list.clone())
                }
            }
        };
        let chosen = cfg.conditions(|| at("playtest", 0, "conditions"))?;
        let mut conditions = Vec::new();
        let mut sides = Vec::new();
        for &(a, st, v) in &chosen {
            let arm = &cfg.searches[a];
            let style = &cfg.styles[st];
            let variant = &cfg.variants[v];
            let mut overlays = overlays_of("style", st, &style.name, &style.overlays)?;
            overlays.extend(overlays_of("variant", v, &variant.name, &variant.overlays)?);
            let mut params: Vec<(String, f64)> = cfg.parameters.iter().map(|(k, x)| (k.clone(), *x)).collect();
            params.extend(variant.parameters.iter().map(|(k, x)| (k.clone(), *x)));
            let opts =
                CompileOptions { base_dir: base_dir.clone(), overrides: params.clone(), overlays: overlays.clone(), turn_order: None };
            let cname = cfg.condition_name((a, st, v));
            let program = crate::wgdl::compile_str_with(&name, &game_text, &opts)
                .map_err(|e| anyhow!("condition {cname} (overlays [{}]): {e}", overlays.join(", ")))?
                .program;
            let versus = program.players.len() > 1;
            let score = if versus {
                selfplay::check_settings(s, &at)?;
                None
            } else {
                Some(program.value_ref(&s.score).map_err(|e| anyhow!("{}: score = \"{}\": {e}", at("playtest", 0, "score"), s.score))?)
            };
            if versus {
                sides = program.players.clone();
            }
            let uct = arm.uct.unwrap_or(s.uct);
            let factored = arm.encoding.as_deref().unwrap_or(&s.encoding) == "factored";
            let cut_off = arm.cut_off.unwrap_or(s.cut_off);
            let save_best_path = arm.save_best_path.unwrap_or(s.save_best_path);
            let game = Encoded::new(WgdlGame::new(program), factored);
            let kinds = game.kind_names();
            let group_weights = if style.weights.is_empty() {
                None
            } else {
                if kinds.len() > 16 {
                    bail!("{}: weights need at most 16 actions; the game has {}", at("style", st, "weights"), kinds.len());
                }
                for action in style.weights.keys() {
                    if !kinds.contains(action) {
                        bail!(
                            "{}: no action `{action}` in {}; expected one of {}",
                            at("style", st, "weights"),
                            game_path.display(),
                            kinds.join(", ")
                        );
                    }
                }
                Some(kinds.iter().map(|k| style.weights.get(k).copied().unwrap_or(0.0).exp()).collect())
            };
            let formula_text = match (&style.formula, &style.formula_file) {
                (Some(f), _) => Some((f.clone(), "formula")),
                (None, Some(path)) => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| anyhow!("{}: cannot read {}: {e}", at("style", st, "formula_file"), path.display()))?;
                    let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
                    let line =
                        line.ok_or_else(|| anyhow!("{}: {} holds no formula line", at("style", st, "formula_file"), path.display()))?;
                    Some((line.to_string(), "formula_file"))
                }
                (None, None) => None,
            };
            let formula = match &formula_text {
                Some((f, key)) => Formula::parse(f).map_err(|e| anyhow!("{}: {e}", at("style", st, key)))?,
                None => Formula::ucb1(uct, 1.0),
            };
            // CUT_OFF and the best path are one-player devices (an exhausted subtree's best is
            // exact only there): self-play searches without them.
            let mcts = MctsConfig {
                formula,
                group_weights,
                add_best_path: save_best_path && !versus,
                cut_off: cut_off && !versus,
                max_playout_moves: s.max_playout_moves,
                ..MctsConfig::default()
            };
            let selection = match &formula_text {
                Some((f, _)) => format!("formula {f}"),
                None => format!("UCT c = {uct}"),
            };
            let mut describe = if versus {
                format!(
                    "self-play, the same search on every side: {} rollouts per move; overlays [{}]; {} encoding; {selection}; reward 1 for a win of the side to move",
                    s.rollouts,
                    overlays.join(", "),
                    if factored { "factored" } else { "flat" },
                )
            } else {
                format!(
                    "overlays [{}]; {} encoding; {selection}; CUT_OFF {}; save best path {}",
                    overlays.join(", "),
                    if factored { "factored" } else { "flat" },
                    if cut_off { "on" } else { "off" },
                    if save_best_path { "on" } else { "off" },
                )
            };
            if !params.is_empty() {
                let p: Vec<String> = params.iter().map(|(k, x)| format!("{k} = {x}")).collect();
                let _ = write!(describe, "; {}", p.join(", "));
            }
            if !style.weights.is_empty() {
                let w: Vec<String> = style.weights.iter().map(|(k, x)| format!("{k} {x}")).collect();
                let _ = write!(describe, "; softmax weights {}", w.join(", "));
            }
            let full = format!("{}/{}/{}", arm.name, style.name, variant.name);
            conditions.push(Condition {
                file: cname.replace('/', "-"),
                name: cname,
                game,
                score,
                mcts,
                describe,
                stream: fnv(&full),
                overlays,
                params,
            });
        }
        let legacy_text = format!("{}\n--- game\n{game_text}", toml::to_string(&cfg).unwrap_or_default());
        // The key holds the game's text, not where it was found (the path depends on the
        // working folder); formula files are named absolutely. A run resumed from another
        // working folder or after its folder moved is still the same run.
        let mut keyed = cfg.clone();
        keyed.playtest.game = keyed.playtest.game.file_name().map(PathBuf::from).unwrap_or_default();
        for st in &mut keyed.styles {
            if let Some(f) = &mut st.formula_file {
                *f = crate::report::run_dir::game_path(f);
            }
        }
        let key_text = format!("{}\n--- game\n{game_text}", toml::to_string(&keyed).unwrap_or_default());
        // One folder per (config name, seed): runs with another seed never overwrite it.
        let out_dir = out_root.join(&cfg.playtest.name).join(format!("seed-{}", cfg.playtest.seed));
        Ok(Setup {
            out_dir,
            key: format!("{:016x}", fnv(&key_text)),
            legacy_key: format!("{:016x}", fnv(&legacy_text)),
            game_path,
            conditions,
            cfg,
            config_path: config_path.to_path_buf(),
            text: text.to_string(),
            exec: Executor::Local,
            sides,
        })
    }

    /// The chance seed of replicate `r`.
    pub fn game_seed(&self, r: u64) -> u64 {
        let s = &self.cfg.playtest;
        rng::derive(s.seed, 0, if s.game_seed == "shared" { 0 } else { r }, 0)
    }

    pub(super) fn rep_path(&self, c: &Condition, r: u64) -> PathBuf {
        self.out_dir.join("runs").join(&c.file).join(format!("rep-{:02}.json", r + 1))
    }

    /// Total rollouts of the whole experiment (for a progress bar).
    pub fn total_rollouts(&self) -> u64 {
        self.conditions.len() as u64 * self.cfg.playtest.replicates * self.cfg.playtest.rollouts
    }
}

/// One finished replicate: what the search found and how the best score rose.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Replicate {
    pub key: String,
    pub condition: String,
    pub replicate: u64,
    pub game_seed: u64,
    /// The highest score seen.
    pub best: f64,
    /// (rollout, new best) at every rollout that raised the best (rollouts count from 1).
    pub improvements: Vec<(u64, f64)>,
    /// Rollouts run (fewer than the budget when CUT_OFF exhausted the tree).
    pub rollouts: u64,
    pub exhausted: bool,
    pub nodes: usize,
    /// Wall-clock seconds: kept beside the record (`rep-NN.seconds`), not in it, so that the
    /// record is the same bytes on every rerun and resume.
    #[serde(skip, default)]
    pub seconds: f64,
    /// The best rollout's moves, as `playforge run --moves` reads them (in a game of sides,
    /// the self-play game's moves).
    pub trace: Vec<String>,
    /// A game of sides: how the self-play game ended. Then `best` is 0, `improvements` empty,
    /// `rollouts` the searches' rollouts over the whole game and `nodes` the moves searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<Played>,
}

impl Replicate {
    /// The highest score seen after each of `n` rollouts (the last value carried on past an
    /// early stop; NaN before the first rollout scored).
    pub fn curve(&self, n: u64) -> Vec<f64> {
        let mut out = Vec::with_capacity(n as usize);
        let mut best = f64::NAN;
        let mut it = self.improvements.iter().peekable();
        for i in 1..=n {
            while let Some(&&(r, v)) = it.peek() {
                if r > i {
                    break;
                }
                best = v;
                it.next();
            }
            out.push(best);
        }
        out
    }
}

/// Runs one replicate of one condition. `None` when interrupted.
pub fn run_replicate(setup: &Setup, c: &Condition, r: u64, progress: &AtomicU64) -> Result<Option<Replicate>> {
    let Some(score) = c.score else { return selfplay::play_replicate(setup, c, r, progress) };
    let t0 = Instant::now();
    let s = &setup.cfg.playtest;
    let game_seed = setup.game_seed(r);
    let mut game = c.game.clone();
    game.game.seed = game_seed;
    let root = game.initial().map_err(|e| anyhow!("{}: the start state: {e}", c.name))?;
    let eval = RawScore { program: &game.game.program, score };
    let mut rng = rng::stream(s.seed, 1, r, c.stream);
    let mut improvements = Vec::new();
    let mut last = f64::NEG_INFINITY;
    let mut pending = 0u64;
    let mut interrupted = false;
    let sub = SubGame { goal_target: usize::MAX };
    let res = mcts::search_observed(&game, &root, sub, &c.mcts, &eval, Budget::Iterations(s.rollouts), &mut rng, |ro: Rollout| {
        if ro.best > last {
            last = ro.best;
            improvements.push((ro.iteration, ro.best));
        }
        pending += 1;
        if pending == 256 {
            progress.fetch_add(pending, Ordering::Relaxed);
            pending = 0;
            if INTERRUPTED.load(Ordering::Relaxed) {
                interrupted = true;
                return false;
            }
        }
        true
    })
    .map_err(|e| anyhow!("{} replicate {}: {e}", c.name, r + 1))?;
    progress.fetch_add(pending, Ordering::Relaxed);
    if interrupted {
        return Ok(None);
    }
    // The rollouts a CUT_OFF stop saved still count as done for the progress bar.
    progress.fetch_add(s.rollouts - res.iterations, Ordering::Relaxed);
    // Replay the best trace from the start: it must reach the same score (the thesis's replay
    // consistency check; a mismatch means the game is not a function of its seed and moves).
    let moves = Encoded::moves(&res.path);
    let mut st = game.game.initial().map_err(|e| anyhow!("{e}"))?;
    let mut trace = Vec::with_capacity(moves.len());
    for &m in &moves {
        trace.push(game.game.program.action_name(&st, m));
        game.game.apply(&mut st, m).map_err(|e| anyhow!("{} replicate {}: replaying the best trace: {e}", c.name, r + 1))?;
    }
    let replayed = game.game.program.read(&st, score);
    if (replayed - res.value).abs() > 1e-9 * res.value.abs().max(1.0) {
        bail!(
            "{} replicate {}: the best trace scores {replayed} when replayed but {} in the search; the game is not a function of its seed and moves",
            c.name,
            r + 1,
            res.value
        );
    }
    Ok(Some(Replicate {
        key: setup.key.clone(),
        condition: c.name.clone(),
        replicate: r,
        game_seed,
        best: res.value,
        improvements,
        rollouts: res.iterations,
        exhausted: res.iterations < s.rollouts,
        nodes: res.nodes,
        seconds: t0.elapsed().as_secs_f64(),
        trace,
        game: None,
    }))
}

/// What a run produced: every replicate of every condition, in order.
pub struct Outcome {
    pub reps: Vec<Vec<Replicate>>,
    pub interrupted: bool,
}

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
    // Here every replicate is written as it finishes; elsewhere a wave of them at a time, two
    // per CPU, so that a driver stopped mid-run keeps all but the wave in flight.
    let local = matches!(setup.exec, Executor::Local);
    let wave = if local { jobs.len().max(1) } else { 2 * setup.exec.cpus() };
    for chunk in jobs.chunks(wave) {
        if INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
        let finished = setup.exec.map::<PlaytestReplicate>(
            || PlaytestContext::new(setup, &setup.config_path, &setup.text),
            chunk,
            |_, j| -> Result<Option<Done>> {
                if INTERRUPTED.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let done = run_replicate(setup, &setup.conditions[j.condition], j.replicate, progress)?
                    .map(|rep| Done { seconds: rep.seconds, rep });
                if let Some(d) = &done {
                    save(j.condition, d)?;
                }
                Ok(done)
            },
        )?;
        if !local {
            for (j, d) in chunk.iter().zip(&finished) {
                if let Some(d) = d {
                    progress.fetch_add(s.rollouts, Ordering::Relaxed);
                    save(j.condition, d)?;
                }
            }
        }
    }
    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
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
    if !((rep.key == setup.key || rep.key == setup.legacy_key) && rep.replicate == r) {
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
            let mut text = format!(
                "// {}: best of {} replicates, score {} (replicate {}, chance seed {})\n// {}\n// replay: playforge run {} --moves <this file> --chance-seed {}{}{}\n",
                c.name,
                reps.len(),
                fmt_num(best.best),
                best.replicate + 1,
                best.game_seed,
                c.describe,
                setup.game_path.display(),
                best.game_seed,
                c.overlays.iter().map(|o| format!(" --overlay {o}")).collect::<String>(),
                c.params.iter().map(|(k, x)| format!(" --set {k}={x}")).collect::<String>(),
            );
            for m in &best.trace {
                text.push_str(m);
                text.push('\n');
            }
            write_atomic(&dir.join("best").join(format!("{}.moves", c.file)), text.as_bytes())?;
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
    md.push_str("\nFiles: curves/<condition>.csv (highest score seen after each rollout, one column per replicate), finals.csv, mann_whitney.csv, playtest.png, best/<condition>.moves (the best trace, replayable with `playforge run`), runs/ (one file per replicate: the checkpoint).\n");
    write_atomic(&dir.join("summary.md"), md.as_bytes())?;
    Ok((rows, md))
}

/// Whole numbers without a fraction, others with up to 4 decimals (trailing zeros dropped).
pub(super) fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        String::new()
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.4}").trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
