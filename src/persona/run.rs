//! The persona loop (Mugrai et al. 2019, A.4): for each `[[persona]]`, generations of GP over
//! the MCTS selection formula. Every generation draws fresh game seeds shared by every
//! individual and by the two baselines (vanilla UCB1 MCTS and a random player); an individual's
//! fitness is its mean measure over those games (negated for `min` personas, so that one
//! elitist maximizing loop serves all four). With the binary reward the goal ratchets: a rollout
//! "wins" when it beats the previous generation's best mean (in the first generation: the
//! random player's mean on the same seeds).
//!
//! Streams: game seeds derive from (seed, generation, game); an agent's stream from (seed,
//! persona, generation, individual, game); the GP's from (seed, persona, generation). A
//! checkpoint after every generation holds the population as text (formulas print and parse back
//! exactly), the goal and the history, so `--resume` gives the numbers of an uninterrupted run,
//! on any number of threads.

use super::config::{Persona, PersonaConfig};
use super::jobs::{AgentSpec, GameJob, PersonaContext, PersonaGame, Setup, TAG_GP, TAG_HELD_OUT, TAG_RANDOM, TAG_VANILLA};
use super::play::{Agent, GameResult};
use crate::evolve::gp::{self, Origin};
use crate::exec::Executor;
use crate::report::{chart, csv_bytes, write_atomic};
use crate::rng::{derive, stream};
use crate::search::formula::Formula;
use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One row of history.csv: one generation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GenRow {
    pub generation: u64,
    /// The binary reward's goal this generation (the previous best; NaN with `continuous`).
    pub goal: f64,
    /// The population's mean measures: largest, median, smallest.
    pub max: f64,
    pub median: f64,
    pub min: f64,
    /// The best individual's mean measure (by the persona's direction), score and legal moves.
    pub best: f64,
    pub best_score: f64,
    pub best_legal_moves: f64,
    pub vanilla: f64,
    pub random: f64,
    pub vanilla_score: f64,
    pub random_score: f64,
    pub best_formula: String,
    pub best_simplified: String,
    pub elapsed_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The config text and the game's text it belongs to (a resume with others is refused).
    pub key: String,
    pub next_generation: u64,
    /// The population to evaluate next, as exact infix text.
    pub population: Vec<String>,
    pub origins: Vec<Origin>,
    /// The goal of the next generation (`None` before the first).
    pub goal: Option<f64>,
    pub history: Vec<GenRow>,
    pub elapsed_s: f64,
}

impl Checkpoint {
    /// Checks a checkpoint read back before anything uses it: the population's size against
    /// the config's (and one origin per individual), every formula parsing, the goal finite and
    /// set once a generation ran, the counters against the configured generations and the
    /// history. The error names `path`, the field and what was expected.
    pub fn validate(&self, path: &Path, cfg: &PersonaConfig) -> Result<()> {
        self.check(cfg).map_err(|what| anyhow!(crate::report::run_dir::bad_checkpoint(path, &what)))
    }

    fn check(&self, cfg: &PersonaConfig) -> std::result::Result<(), String> {
        let (size, gens) = (cfg.gp.population, cfg.personas.generations);
        if self.population.len() != size {
            return Err(format!("population has {} formulas; expected {size} (the config's gp.population)", self.population.len()));
        }
        if self.origins.len() != self.population.len() {
            return Err(format!("origins has {} entries; expected {} (one per formula)", self.origins.len(), self.population.len()));
        }
        for (i, t) in self.population.iter().enumerate() {
            Formula::parse(t)
                .map_err(|e| format!("population[{i}] `{}`: {e}; expected a formula", t.chars().take(80).collect::<String>()))?;
        }
        if self.next_generation > gens {
            return Err(format!("next_generation = {}; expected at most {gens} (the config's generations)", self.next_generation));
        }
        if self.history.len() as u64 != self.next_generation {
            return Err(format!(
                "history has {} rows; expected next_generation = {} (one per generation)",
                self.history.len(),
                self.next_generation
            ));
        }
        if let Some((k, r)) = self.history.iter().enumerate().find(|(k, r)| r.generation != *k as u64) {
            return Err(format!("history row {k} is generation {}; expected {k}", r.generation));
        }
        match self.goal {
            Some(g) if !g.is_finite() => return Err(format!("goal = {g}; expected a finite number")),
            None if self.next_generation > 0 => return Err("goal is missing; expected the last generation's best mean".into()),
            _ => {}
        }
        if !(self.elapsed_s.is_finite() && self.elapsed_s >= 0.0) {
            return Err(format!("elapsed_s = {}; expected seconds ≥ 0", self.elapsed_s));
        }
        Ok(())
    }
}

/// A persona's result.
#[derive(Clone, Debug)]
pub struct PersonaOutcome {
    pub name: String,
    pub dir: PathBuf,
    pub best: Formula,
    /// The goal the best would be held to next (its generation's best mean).
    pub goal: f64,
    pub history: Vec<GenRow>,
    pub interrupted: bool,
}

/// One game to play: who, on which chance seed, and the (seed, generation, individual, game)
/// of the player's own stream.
pub type Job<'a> = (&'a Agent, u64, (u64, u64, u64, u64));

/// Plays every job of persona `k` (whose measure is read) on the setup's executor (results in
/// job order); counts finished games in `done`.
pub fn play_jobs(setup: &Setup, k: usize, jobs: &[Job], done: &AtomicU64) -> Result<Vec<GameResult>> {
    let wire: Vec<GameJob> =
        jobs.iter().map(|&(agent, seed, stream)| GameJob { persona: k, agent: AgentSpec::of(agent), seed, stream }).collect();
    let results = setup.exec.map::<PersonaGame>(
        || PersonaContext::new(setup),
        &wire,
        |i, _| {
            let (agent, seed, stream) = jobs[i];
            let r = setup.play(k, agent, seed, stream);
            done.fetch_add(1, Ordering::Relaxed);
            r
        },
    )?;
    if !matches!(setup.exec, Executor::Local) {
        done.fetch_add(results.len() as u64, Ordering::Relaxed);
    }
    Ok(results)
}

/// Plays `agent` of persona `k` on every seed; `stream_seed(game index)` gives its stream.
pub fn play_many(
    setup: &Setup,
    k: usize,
    agent: &Agent,
    seeds: &[u64],
    stream_seed: impl Fn(u64) -> (u64, u64, u64, u64),
    done: &AtomicU64,
) -> Result<Vec<GameResult>> {
    let jobs: Vec<Job> = seeds.iter().enumerate().map(|(j, &seed)| (agent, seed, stream_seed(j as u64))).collect();
    play_jobs(setup, k, &jobs, done)
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// What a persona's checkpoint belongs to: the resolved config, the persona and the game.
/// What persona `p`'s checkpoint belongs to: the resolved config, the persona, and the game's
/// hash (its text and map, [`crate::drive::game::game_hash`]).
fn checkpoint_key(setup: &Setup, p: &Persona) -> String {
    format!("{}\n--- persona {}\n# game {:016x}\n", setup.text, p.name, super::jobs::game_hash(setup))
}

/// The key older versions wrote: the game's whole text in place of its hash (a changed map went
/// unseen).
fn legacy_key(setup: &Setup, p: &Persona) -> String {
    let game = match (&setup.program, &setup.external) {
        (Some(program), _) => program.source.text.as_str(),
        (None, Some(e)) => e.text.as_str(),
        (None, None) => "",
    };
    format!("{}\n--- persona {}\n--- game\n{game}", setup.text, p.name)
}

/// Whether persona `k` has a checkpoint in this run's folder.
pub fn has_checkpoint(setup: &Setup, k: usize) -> bool {
    setup.out_dir.join(&setup.cfg.list[k].name).join("checkpoint.json").exists()
}

/// Persona `k`'s outcome when its checkpoint (of this config and game) says it finished.
pub fn finished(setup: &Setup, k: usize) -> Option<PersonaOutcome> {
    let p = &setup.cfg.list[k];
    let dir = setup.out_dir.join(&p.name);
    let text = crate::input::read_text_within(&dir.join("checkpoint.json"), 1 << 30).ok()?;
    let ck: Checkpoint = serde_json::from_str(&text).ok()?;
    if (ck.key != checkpoint_key(setup, p) && ck.key != legacy_key(setup, p)) || ck.next_generation < setup.cfg.personas.generations {
        return None;
    }
    ck.validate(&dir.join("checkpoint.json"), &setup.cfg).ok()?;
    let last = ck.history.last()?;
    let best = Formula::parse(&last.best_formula).ok()?;
    Some(PersonaOutcome { name: p.name.clone(), dir, best, goal: last.best, history: ck.history.clone(), interrupted: false })
}

/// Every persona of the config in its order: this run's outcomes, else the finished ones on
/// disk (personas run in pieces with `--only` all reach the held-out table).
pub fn with_finished(setup: &Setup, outcomes: &[(usize, PersonaOutcome)]) -> Vec<(usize, PersonaOutcome)> {
    (0..setup.cfg.list.len())
        .filter_map(|k| match outcomes.iter().find(|(j, _)| *j == k) {
            Some((_, o)) => Some((k, o.clone())),
            None => finished(setup, k).map(|o| (k, o)),
        })
        .collect()
}

/// The run of the `chosen` personas, then the held-out table of every persona finished so far,
/// as `playforge personas` makes it: the seed's folder held for the run (a second run on it is
/// refused, not raced; personas run in pieces with `--only` share it, so each persona's own
/// folder is what a fresh run clears) and its config.toml written first. Stops after a persona
/// that was interrupted.
pub fn run_chosen(
    setup: &Setup,
    chosen: &[usize],
    resume: bool,
    done: &AtomicU64,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Vec<(usize, PersonaOutcome)>> {
    let _run_dir = crate::report::run_dir::RunDir::open(&setup.out_dir)?;
    write_atomic(&setup.out_dir.join("config.toml"), setup.text.as_bytes()).map_err(|e| anyhow!("cannot write config.toml: {e}"))?;
    let mut outcomes = Vec::new();
    for &k in chosen {
        let o = run_persona(setup, k, resume, done, progress)?;
        let stopped = o.interrupted;
        outcomes.push((k, o));
        if stopped {
            return Ok(outcomes);
        }
    }
    if setup.cfg.personas.held_out > 0 {
        progress("held-out games");
        held_out(setup, &with_finished(setup, &outcomes), done)?;
    }
    Ok(outcomes)
}

/// Runs (or resumes) persona `k`; `progress(done)` is called as games finish.
pub fn run_persona(setup: &Setup, k: usize, resume: bool, done: &AtomicU64, progress: &(dyn Fn(&str) + Sync)) -> Result<PersonaOutcome> {
    let p = &setup.cfg.list[k];
    let s = &setup.cfg.personas;
    let dir = setup.out_dir.join(&p.name);
    let key = checkpoint_key(setup, p);
    let ck_path = dir.join("checkpoint.json");
    if !(resume && ck_path.exists()) && dir.exists() {
        // A fresh run of this persona: nothing of an older one stays beside the new outputs.
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let pseed = setup.persona_seed(k);
    let opts = crate::drive::RunOptions::<()> { resume, ..Default::default() };
    let legacy = [legacy_key(setup, p)];
    let expect = crate::drive::Expect { path: &ck_path, key: &key, legacy: &legacy, missing: None };
    let stored = crate::drive::resume(&opts, &expect, |ck: &Checkpoint| &ck.key, |ck| ck.validate(&ck_path, &setup.cfg))?
        .map(|ck| Checkpoint { key: key.clone(), ..ck });
    let mut ck = if let Some(ck) = stored {
        done.fetch_add(ck.next_generation * (setup.cfg.gp.population as u64 + 2) * s.games, Ordering::Relaxed);
        ck
    } else {
        let mut rng = stream(pseed, 0, TAG_GP, 1);
        let pop = gp::initial_population(&setup.cfg.gp, &mut rng).map_err(|e| anyhow!("persona {}: {e}", p.name))?;
        Checkpoint {
            key,
            next_generation: 0,
            origins: vec![Origin::Initial; pop.len()],
            population: pop.iter().map(|f| f.to_string()).collect(),
            goal: None,
            history: Vec::new(),
            elapsed_s: 0.0,
        }
    };
    let mut step =
        Generation { setup, k, p, dir: &dir, ck_path: &ck_path, pseed, t0: Instant::now(), elapsed0: ck.elapsed_s, done, progress };
    let ended = crate::drive::run(&mut step, &mut ck, setup.max_generations)?;
    let interrupted = ended.interrupted || ended.capped;
    let last = ck.history.last().ok_or_else(|| anyhow!("persona {}: no generation was played", p.name))?;
    let best = Formula::parse(&last.best_formula).map_err(|e| anyhow!("{e}"))?;
    Ok(PersonaOutcome { name: p.name.clone(), dir, best, goal: last.best, history: ck.history.clone(), interrupted })
}

/// One generation of persona `k` as the run loop drives it ([`crate::drive::run`]).
struct Generation<'a> {
    setup: &'a Setup,
    k: usize,
    p: &'a Persona,
    dir: &'a Path,
    ck_path: &'a Path,
    pseed: u64,
    t0: Instant,
    elapsed0: f64,
    done: &'a AtomicU64,
    progress: &'a (dyn Fn(&str) + Sync),
}

impl crate::drive::Search for Generation<'_> {
    type Ck = Checkpoint;

    fn over(&self, ck: &Checkpoint) -> bool {
        ck.next_generation >= self.setup.cfg.personas.generations
    }

    fn begun(&self, ck: &Checkpoint) -> u64 {
        ck.next_generation
    }

    /// The random player, vanilla MCTS and every individual on the generation's seeds; the
    /// next generation bred; its row, population, checkpoint and outputs written.
    fn step(&mut self, ck: &mut Checkpoint) -> Result<crate::drive::Flow> {
        let (setup, k, p, dir, ck_path, pseed, done, progress) =
            (self.setup, self.k, self.p, self.dir, self.ck_path, self.pseed, self.done, self.progress);
        let (t0, elapsed0) = (self.t0, self.elapsed0);
        let g = ck.next_generation;
        let pop: Vec<Formula> =
            ck.population.iter().map(|t| Formula::parse(t).map_err(|e| anyhow!("{}: {e}", ck_path.display()))).collect::<Result<_>>()?;
        let seeds = setup.game_seeds(g);
        // The random player first: its mean is the first generation's goal.
        let random = play_many(setup, k, &Agent::Random, &seeds, |j| (pseed, g, TAG_RANDOM, j), done)?;
        let random_mean = mean(random.iter().map(|r| r.measure));
        let goal = ck.goal.unwrap_or(random_mean);
        let vanilla_agent = Agent::Mcts { formula: setup.vanilla(), reward: setup.reward(p, random_mean) };
        // Vanilla MCTS and every individual on every seed: one batch (both only wait for the
        // random player), in parallel over (agent, game); vanilla's games first.
        let agents: Vec<Agent> = pop.iter().map(|f| Agent::Mcts { formula: f.clone(), reward: setup.reward(p, goal) }).collect();
        let jobs: Vec<Job> = seeds
            .iter()
            .enumerate()
            .map(|(j, &seed)| (&vanilla_agent, seed, (pseed, g, TAG_VANILLA, j as u64)))
            .chain(
                agents
                    .iter()
                    .enumerate()
                    .flat_map(|(i, agent)| seeds.iter().enumerate().map(move |(j, &seed)| (agent, seed, (pseed, g, i as u64, j as u64)))),
            )
            .collect();
        let mut results = play_jobs(setup, k, &jobs, done)?;
        let vanilla: Vec<GameResult> = results.drain(..seeds.len()).collect();
        let n = seeds.len();
        let means: Vec<f64> = (0..pop.len()).map(|i| mean(results[i * n..(i + 1) * n].iter().map(|r| r.measure))).collect();
        let fitness: Vec<f64> = means.iter().map(|&v| if p.maximize() { v } else { -v }).collect();
        let order = gp::rank(&fitness);
        let b = order[0];
        let row = GenRow {
            generation: g,
            goal: if setup.cfg.personas.binary() { goal } else { f64::NAN },
            max: means.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            median: crate::report::stats::median(&means),
            min: means.iter().copied().fold(f64::INFINITY, f64::min),
            best: means[b],
            best_score: mean(results[b * n..(b + 1) * n].iter().map(|r| r.score)),
            best_legal_moves: mean(results[b * n..(b + 1) * n].iter().map(|r| r.legal_moves)),
            vanilla: mean(vanilla.iter().map(|r| r.measure)),
            random: random_mean,
            vanilla_score: mean(vanilla.iter().map(|r| r.score)),
            random_score: mean(random.iter().map(|r| r.score)),
            best_formula: pop[b].to_string(),
            best_simplified: gp::pretty(&pop[b]),
            elapsed_s: elapsed0 + t0.elapsed().as_secs_f64(),
        };
        progress(&format!("{} gen {g}: best {:.1} ({})", p.name, row.best, row.best_simplified));
        ck.history.push(row);
        // The next generation, and the goal it must beat.
        let mut rng = stream(pseed, g, TAG_GP, 0);
        let next = gp::next_generation(&pop, &fitness, &setup.cfg.gp, &mut rng);
        write_population(&dir.join("population.csv"), &pop, &ck.origins, &means)?;
        ck.population = next.iter().map(|(f, _)| f.to_string()).collect();
        ck.origins = next.iter().map(|(_, o)| *o).collect();
        ck.goal = Some(means[b]);
        ck.next_generation = g + 1;
        ck.elapsed_s = elapsed0 + t0.elapsed().as_secs_f64();
        crate::drive::save(ck_path, &*ck).with_context(|| format!("cannot write {}", ck_path.display()))?;
        write_persona_outputs(setup, p, dir, &ck.history)?;
        Ok(crate::drive::Flow::Next)
    }
}

fn write_population(path: &Path, pop: &[Formula], origins: &[Origin], means: &[f64]) -> Result<()> {
    let header: Vec<String> = ["rank", "mean_measure", "origin", "formula", "simplified"].iter().map(|s| s.to_string()).collect();
    let mut idx: Vec<usize> = (0..pop.len()).collect();
    idx.sort_by(|&a, &b| means[b].total_cmp(&means[a]));
    let rows: Vec<Vec<String>> = idx
        .iter()
        .enumerate()
        .map(|(r, &i)| {
            vec![
                (r + 1).to_string(),
                format!("{:.3}", means[i]),
                format!("{:?}", origins[i]).to_lowercase(),
                pop[i].to_string(),
                gp::pretty(&pop[i]),
            ]
        })
        .collect();
    write_atomic(path, &csv_bytes(&header, &rows)).with_context(|| format!("cannot write {}", path.display()))
}

impl crate::drive::history::Row for GenRow {
    const STEP: &'static str = "generation";

    fn header() -> &'static [&'static str] {
        &[
            "generation",
            "goal",
            "max",
            "median",
            "min",
            "best",
            "best_score",
            "best_legal_moves",
            "vanilla",
            "random",
            "vanilla_score",
            "random_score",
            "best_formula",
            "best_simplified",
        ]
    }

    fn cells(&self) -> Vec<String> {
        let f = |x: f64| format!("{x:.3}");
        vec![
            self.generation.to_string(),
            f(self.goal),
            f(self.max),
            f(self.median),
            f(self.min),
            f(self.best),
            f(self.best_score),
            f(self.best_legal_moves),
            f(self.vanilla),
            f(self.random),
            f(self.vanilla_score),
            f(self.random_score),
            self.best_formula.clone(),
            self.best_simplified.clone(),
        ]
    }

    fn timing(&self) -> (u64, f64) {
        (self.generation, self.elapsed_s)
    }
}

/// history.csv, hall_of_fame.md, best_formula.txt and convergence.png of one persona.
pub fn write_persona_outputs(setup: &Setup, p: &Persona, dir: &Path, history: &[GenRow]) -> Result<()> {
    crate::drive::history::write(dir, history)?;
    // The hall of fame: each generation's best, newest first.
    let mut md = format!(
        "# {} — hall of fame\n\nEach generation's best individual ({} {} of `{}`, mean over {} games).\n\n| generation | mean | score | legal moves | formula (simplified) |\n|---:|---:|---:|---:|---|\n",
        p.name, p.direction, p.aggregate, p.measure, setup.cfg.personas.games
    );
    for r in history.iter().rev() {
        md +=
            &format!("| {} | {:.2} | {:.0} | {:.2} | `{}` |\n", r.generation, r.best, r.best_score, r.best_legal_moves, r.best_simplified);
    }
    let path = dir.join("hall_of_fame.md");
    write_atomic(&path, md.as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(last) = history.last() {
        let text = format!(
            "{}\n# simplified: {}\n# goal: {}\n# persona {}: {} {} of {}, generation {}\n",
            last.best_formula, last.best_simplified, last.best, p.name, p.direction, p.aggregate, p.measure, last.generation
        );
        write_atomic(&dir.join("best_formula.txt"), text.as_bytes())?;
    }
    convergence_png(p, &setup.cfg.personas.name, setup.cfg.personas.seed, &dir.join("convergence.png"), history)
}

/// The paper's Figs. 3–6: max, median and min of the population over generations, the two
/// baselines, and the floor where the persona has one.
pub fn convergence_png(p: &Persona, config_name: &str, seed: u64, path: &Path, history: &[GenRow]) -> Result<()> {
    let pts = |f: &dyn Fn(&GenRow) -> f64| history.iter().map(|r| (r.generation as f64, f(r))).collect::<Vec<_>>();
    let series = |name: &str, f: &dyn Fn(&GenRow) -> f64| chart::Series::line(name, pts(f));
    let mut lines = vec![
        series("max", &|r| r.max),
        series("median", &|r| r.median),
        series("min", &|r| r.min),
        series("vanilla MCTS", &|r| r.vanilla),
        series("random", &|r| r.random),
    ];
    if let Some(fl) = p.floor {
        lines.push(series(&format!("floor {fl}"), &|_| fl));
    }
    let what = if p.mean() { format!("mean {} over the moves", p.measure) } else { p.measure.clone() };
    let panel = chart::Panel {
        title: format!("{} ({} {}): population per generation", p.name, p.direction, what),
        x_label: "generation".into(),
        y_label: what,
        series: lines,
    };
    chart::line_panels(path, &format!("{} convergence — {} (seed {})", p.name, config_name, seed), &[panel], 900, 520)
        .map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}

/// One line of the held-out table.
#[derive(Clone, Debug, Serialize)]
pub struct HeldOutRow {
    pub agent: String,
    pub persona: String,
    pub measure: f64,
    pub score_mean: f64,
    pub score_sd: f64,
    pub score_min: f64,
    pub score_max: f64,
    pub legal_moves: f64,
    pub formula: String,
}

fn held_row(agent: &str, persona: &str, formula: String, rs: &[GameResult]) -> HeldOutRow {
    let scores: Vec<f64> = rs.iter().map(|r| r.score).collect();
    HeldOutRow {
        agent: agent.into(),
        persona: persona.into(),
        measure: mean(rs.iter().map(|r| r.measure)),
        score_mean: mean(scores.iter().copied()),
        score_sd: crate::report::stats::summary(&scores).sd,
        score_min: scores.iter().copied().fold(f64::INFINITY, f64::min),
        score_max: scores.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        legal_moves: mean(rs.iter().map(|r| r.legal_moves)),
        formula,
    }
}

/// Every persona's final best, and per persona the vanilla MCTS, on the held-out seeds; the
/// random player once. Writes held_out.csv and held_out.md.
pub fn held_out(setup: &Setup, outcomes: &[(usize, PersonaOutcome)], done: &AtomicU64) -> Result<Vec<HeldOutRow>> {
    let seeds = setup.held_out_seeds();
    let mut rows = Vec::new();
    let base = derive(setup.cfg.personas.seed, 1, TAG_HELD_OUT, 0);
    for (k, o) in outcomes {
        let p = &setup.cfg.list[*k];
        let agent = Agent::Mcts { formula: o.best.clone(), reward: setup.reward(p, o.goal) };
        let rs = play_many(setup, *k, &agent, &seeds, |j| (base, *k as u64, 0, j), done)?;
        rows.push(held_row(&p.name, &p.name, gp::pretty(&o.best), &rs));
        // Vanilla with this persona's measure, held to beating the random player.
        let random = play_many(setup, *k, &Agent::Random, &seeds, |j| (base, *k as u64, 2, j), done)?;
        let goal = mean(random.iter().map(|r| r.measure));
        let agent = Agent::Mcts { formula: setup.vanilla(), reward: setup.reward(p, goal) };
        let rs = play_many(setup, *k, &agent, &seeds, |j| (base, *k as u64, 1, j), done)?;
        rows.push(held_row(&format!("vanilla ({} {})", p.direction, p.measure), &p.name, setup.vanilla().to_string(), &rs));
    }
    // The random player's row: its own streams, whichever personas are in the table.
    let random = play_many(setup, 0, &Agent::Random, &seeds, |j| (base, TAG_RANDOM, 2, j), done)?;
    rows.push(held_row("random", "", String::new(), &random));
    let header: Vec<String> = ["agent", "persona", "measure", "score_mean", "score_sd", "score_min", "score_max", "legal_moves", "formula"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let csv_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.agent.clone(),
                r.persona.clone(),
                format!("{:.3}", r.measure),
                format!("{:.1}", r.score_mean),
                format!("{:.1}", r.score_sd),
                format!("{:.0}", r.score_min),
                format!("{:.0}", r.score_max),
                format!("{:.3}", r.legal_moves),
                r.formula.clone(),
            ]
        })
        .collect();
    let path = setup.out_dir.join("held_out.csv");
    write_atomic(&path, &csv_bytes(&header, &csv_rows)).with_context(|| format!("cannot write {}", path.display()))?;
    let path = setup.out_dir.join("held_out.md");
    write_atomic(&path, held_out_markdown(setup, &rows).as_bytes()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(rows)
}

pub fn held_out_markdown(setup: &Setup, rows: &[HeldOutRow]) -> String {
    let s = &setup.cfg.personas;
    let (search, legal) = match setup.external {
        // A game in its own process: the prefix-tree search, the episode's options.
        Some(_) => ("whole episodes per prefix-tree search (the best kept)", "mean options per decision of the game's episode"),
        None => ("MCTS iterations per move", "mean number of legal moves before each move"),
    };
    let mut md = format!(
        "# {} — held-out games\n\n{} held-out seeds (never used in evolution), {} {search}. Score = `{}`; legal moves = {legal}.\n\n| agent | score (mean ± sd) | min – max | legal moves | formula |\n|---|---:|---:|---:|---|\n",
        s.name, s.held_out, s.iterations, s.score
    );
    for r in rows {
        md += &format!(
            "| {} | {:.0} ± {:.0} | {:.0} – {:.0} | {:.2} | `{}` |\n",
            r.agent, r.score_mean, r.score_sd, r.score_min, r.score_max, r.legal_moves, r.formula
        );
    }
    md
}

/// Reads a best_formula.txt: the formula (first non-comment line) and the `# goal:` line. A
/// formula nested deeper than [`crate::search::formula::MAX_DEPTH`] levels is an error at its
/// line and column, as is any other that does not parse (the column counts the line's indent).
pub fn read_formula_file(path: &Path) -> Result<(Formula, Option<f64>)> {
    let text = crate::input::read_text(path)?;
    let mut formula = None;
    let mut goal = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(g) = t.strip_prefix("# goal:") {
            goal = Some(g.trim().parse::<f64>().map_err(|_| {
                let shown: String = t.chars().take(80).chain(if t.chars().nth(80).is_some() { Some('…') } else { None }).collect();
                anyhow!("{}:{}:1: `{shown}`; expected `# goal: <number>`", path.display(), i + 1)
            })?);
        } else if !t.is_empty() && !t.starts_with('#') && formula.is_none() {
            let indent = line.chars().count() - line.trim_start().chars().count();
            formula = Some(Formula::parse(t).map_err(|e| anyhow!("{}:{}:{}: {e}", path.display(), i + 1, e.col + indent))?);
        }
    }
    Ok((formula.ok_or_else(|| anyhow!("{}: no formula; expected one on the first line", path.display()))?, goal))
}
