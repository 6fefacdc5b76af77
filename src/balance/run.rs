//! The balance loop: iterations of the chosen optimizer until the best confirmed F passes the
//! target or the budget (in games) is spent, with a history row and a checkpoint after every
//! iteration, and the outputs at the end (or on Ctrl-C).
//!
//! "Best so far" is honest about noise: after each iteration the candidate with the highest F
//! is re-evaluated on fresh seeds with `confirm_games` games per pair (counted in the budget),
//! and only a confirmed F can become the best. A resumed run restores the optimizer state, the
//! history and the counters, and every stream derives from (seed, iteration, …), so it gives
//! the same numbers as a run that was never stopped.

use super::config::BalanceConfig;
use super::dna::Codec;
use super::fitness::{Eval, Evaluator, target_band};
use super::jobs::BalanceContext;
use super::optim::{CONFIRM, Ctx, EvalHook, Games, Optimizer, Ride};
use crate::drive::content;
use crate::players::Replay;
use crate::report::{chart, num, write_atomic};
use crate::rng::derive;
use anyhow::{Result, anyhow, bail};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One row of history.csv.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    pub iteration: u64,
    pub f: f64,
    pub balance: f64,
    pub length: f64,
    pub difference: f64,
    pub wins: f64,
    pub mean_turns: f64,
    pub best_so_far: f64,
    pub games: u64,
    pub elapsed_s: f64,
    /// F is the all-played penalty: a side never moved (or the game ended in the first round).
    #[serde(default)]
    pub penalized: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Best {
    /// The full DNA (every team gene).
    pub dna: Vec<f64>,
    /// The confirmation's evaluation.
    pub eval: Eval,
    pub iteration: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The resolved config it belongs to (a resume with another config is refused).
    pub config: String,
    pub next_iteration: u64,
    pub optimizer: Optimizer,
    pub best: Option<Best>,
    pub history: Vec<Row>,
    pub games_played: u64,
    pub elapsed_s: f64,
    pub finished: bool,
}

impl Checkpoint {
    /// Checks a checkpoint read back before anything uses it: the optimizer's kind against the
    /// config's, every vector's length against the codec (the search vector, the full DNA),
    /// genes in [0, 1], CMA-ES's state against the config's (λ, σ₀; see [`SepCma::validate`]),
    /// the counters against the budget and the history. The error names `path`, the field and
    /// what was expected.
    ///
    /// [`SepCma::validate`]: crate::evolve::cma::SepCma::validate
    pub fn validate(&self, path: &Path, cfg: &BalanceConfig, codec: &Codec) -> Result<()> {
        self.check(cfg, codec).map_err(|what| anyhow!(crate::report::run_dir::bad_checkpoint(path, &what)))
    }

    fn check(&self, cfg: &BalanceConfig, codec: &Codec) -> std::result::Result<(), String> {
        use crate::evolve::cma::check_unit;
        let n = codec.evolving.len();
        let kind = match &self.optimizer {
            Optimizer::Es { .. } => "es",
            Optimizer::Sa { .. } => "sa",
            Optimizer::Cma(_) => "cma",
        };
        if kind != cfg.balance.optimizer {
            return Err(format!("optimizer is an {kind} state; expected a state of the config's optimizer \"{}\"", cfg.balance.optimizer));
        }
        if self.next_iteration > cfg.balance.max_evaluations {
            return Err(format!(
                "next_iteration = {}; expected at most max_evaluations = {} (an iteration evaluates at least once)",
                self.next_iteration, cfg.balance.max_evaluations
            ));
        }
        if self.history.len() as u64 != self.next_iteration {
            return Err(format!(
                "history has {} rows; expected next_iteration = {} (one per iteration)",
                self.history.len(),
                self.next_iteration
            ));
        }
        if self.games_played > MAX_GAMES_PLAYED {
            return Err(format!("games_played = {}; expected at most 2^52 (the budget is below 2^50)", self.games_played));
        }
        if let Some((k, r)) = self.history.iter().enumerate().find(|(k, r)| r.iteration != *k as u64) {
            return Err(format!("history row {k} is iteration {}; expected {k}", r.iteration));
        }
        if !(self.elapsed_s.is_finite() && self.elapsed_s >= 0.0) {
            return Err(format!("elapsed_s = {}; expected seconds ≥ 0", self.elapsed_s));
        }
        let eval = |what: &str, e: &Eval| -> std::result::Result<(), String> {
            // Finite, not in [0, 1]: the all-played penalty, which sets F, is the config's to choose.
            if !e.f.is_finite() {
                return Err(format!("{what}.f = {}; expected a finite fitness", e.f));
            }
            Ok(())
        };
        match &self.optimizer {
            Optimizer::Es { current } => {
                if let Some(x) = current {
                    check_unit("optimizer current", x, n)?;
                }
            }
            Optimizer::Sa { current } => {
                if let Some((x, e)) = current {
                    check_unit("optimizer current", x, n)?;
                    eval("optimizer current's evaluation", e)?;
                }
            }
            Optimizer::Cma(c) => {
                let expected = crate::evolve::cma::SepCma::new(n, cfg.cma.lambda, cfg.cma.sigma0);
                c.validate(&expected, self.next_iteration).map_err(|e| format!("cma {e}"))?;
            }
        }
        if let Some(b) = &self.best {
            check_unit("best dna", &b.dna, codec.genes.len())?;
            eval("best eval", &b.eval)?;
            if b.iteration >= self.next_iteration {
                return Err(format!("best iteration = {}; expected an iteration run (below {})", b.iteration, self.next_iteration));
            }
        }
        Ok(())
    }
}

/// The most games a checkpoint may count: 2^52, four times the largest budget a config may set
/// (2^50 games), so that the counters cannot overflow in the loop.
pub const MAX_GAMES_PLAYED: u64 = 1 << 52;

/// What a checkpoint belongs to: the resolved config without what depends on where the run
/// started or where its folder is (the game's path, which the hash of its text and map stands
/// for, and `out`), then the game's hash. A run folder moved (`--out` elsewhere) or a run
/// resumed from another working folder is still the same run.
pub fn checkpoint_key(cfg: &BalanceConfig, game_hash: u64) -> Result<String> {
    let mut c = cfg.clone();
    c.balance.game = c.balance.game.file_name().map(PathBuf::from).unwrap_or_default();
    c.balance.out = PathBuf::new();
    Ok(format!("{}\n# game {game_hash:016x}\n", toml::to_string(&c)?))
}

/// How to run: the options every search command shares, with a user's evaluation (ask/tell).
pub type RunOptions = crate::drive::RunOptions<EvalHook>;

/// An iteration whose best candidate awaits its confirmation (see the loop in [`run`]).
struct Waiting {
    /// The confirmation: the iteration, its best candidate, the confirmation's games per pair.
    ride: Ride,
    /// The iteration's own evaluation (its history row).
    current: Eval,
    /// Games played by the end of the iteration, before the confirmation's.
    games_before: u64,
}

/// What a run did.
pub struct Outcome {
    pub dir: PathBuf,
    pub best: Option<Best>,
    pub history: Vec<Row>,
    pub games_played: u64,
    pub reached: bool,
    pub interrupted: bool,
    pub codec: Codec,
}

/// The output folder of a config: `<out>/<name>/<optimizer>-seed-<seed>/` (runs with another
/// optimizer or seed never overwrite each other).
pub fn out_dir(cfg: &BalanceConfig) -> PathBuf {
    cfg.balance.out.join(&cfg.balance.name).join(format!("{}-seed-{}", cfg.balance.optimizer, cfg.balance.seed))
}

/// Runs (or resumes) a balance job. `progress(games, budget, best F, iteration)`.
pub fn run(
    cfg: &BalanceConfig,
    cfg_path: &Path,
    cfg_text: &str,
    opts: &RunOptions,
    progress: &dyn Fn(u64, u64, f64, u64),
) -> Result<Outcome> {
    let codec = Codec::new(cfg, cfg_path, cfg_text)?;
    let ev = Evaluator::new(cfg, codec.probe()).map_err(|e| anyhow!("{}: {e}", cfg_path.display()))?;
    let jobs = BalanceContext::new(cfg, cfg_path, cfg_text, &codec)?;
    let dir = out_dir(cfg);
    // Held until the run returns: a second run on this folder is refused, not raced.
    let run_dir = crate::report::run_dir::RunDir::open(&dir)?;
    // The config as written into the run folder: its game named absolutely (see
    // `report::run_dir`), so `verify` and the report find it from anywhere.
    let mut written = cfg.clone();
    written.balance.game = crate::report::run_dir::game_path(&cfg.balance.game);
    let resolved = toml::to_string(&written)?;
    // The checkpoint also belongs to the game as compiled: a changed .wgdl or map is not resumed.
    let ck_key = checkpoint_key(cfg, codec.game_hash())?;
    // What older versions wrote: the resolved config as it was, paths and all.
    let old_key = format!("{}\n# game {:016x}\n", toml::to_string(cfg)?, codec.game_hash());
    let ck_path = dir.join("checkpoint.json");
    let per_eval = cfg.evaluation.games * cfg.evaluation.pairs.len() as u64;
    let budget_games = cfg.balance.max_evaluations * per_eval;
    let expect = crate::drive::Expect {
        path: &ck_path,
        key: &ck_key,
        legacy: std::slice::from_ref(&old_key),
        missing: Some("config, optimizer and seed"),
    };
    let stored = crate::drive::resume(opts, &expect, |ck: &Checkpoint| &ck.config, |ck| ck.validate(&ck_path, cfg, &codec))?
        .map(|ck| Checkpoint { config: ck_key.clone(), ..ck });
    let mut ck = if let Some(ck) = stored {
        ck
    } else {
        // A fresh run: nothing of an older run stays beside the new outputs.
        run_dir.clear()?;
        Checkpoint {
            config: ck_key.clone(),
            next_iteration: 0,
            optimizer: Optimizer::new(cfg, codec.evolving.len()),
            best: None,
            history: Vec::new(),
            games_played: 0,
            elapsed_s: 0.0,
            finished: false,
        }
    };
    write_atomic(&dir.join("config.toml"), resolved.as_bytes())?;
    let built = Games { codec: &codec, ev: &ev, exec: &opts.exec, jobs: &jobs, seed: cfg.balance.seed };
    let mut step = Step {
        cfg,
        codec: &codec,
        opts,
        built,
        dir: &dir,
        ck_path: &ck_path,
        budget_games,
        start: Instant::now(),
        elapsed0: ck.elapsed_s,
        confirm_games: cfg.evaluation.confirm_games as usize,
        confirm_cost: (ev.n_pairs() * cfg.evaluation.confirm_games as usize) as u64,
        waiting: None,
        progress,
    };
    let interrupted = crate::drive::run(&mut step, &mut ck, opts.max_iterations)?.interrupted;
    write_history(&dir, &ck.history)?;
    if let Some(b) = &ck.best {
        write_best(cfg, &codec, &dir, b)?;
        if !opts.light {
            write_replays(cfg, &codec, &ev, &dir, b)?;
        }
    }
    if !opts.light && !ck.history.is_empty() {
        convergence_chart(cfg, &dir, &ck.history)?;
    }
    let reached = reached(cfg, ck.best.as_ref());
    Ok(Outcome { dir, best: ck.best, history: ck.history, games_played: ck.games_played, reached, interrupted, codec })
}

/// Whether the best so far reached the target: its confirmed F above it, or under the
/// sequential confirmation its interval above it ([`super::sequential`]).
fn reached(cfg: &BalanceConfig, best: Option<&Best>) -> bool {
    best.is_some_and(|b| if sequential(cfg) { b.eval.sure } else { b.eval.f > cfg.balance.target })
}

fn sequential(cfg: &BalanceConfig) -> bool {
    cfg.evaluation.confirm == "sequential"
}

/// One iteration of the balance loop as the run loop drives it ([`crate::drive::run`]).
struct Step<'a> {
    cfg: &'a BalanceConfig,
    codec: &'a Codec,
    opts: &'a RunOptions,
    built: Games<'a>,
    dir: &'a Path,
    ck_path: &'a Path,
    budget_games: u64,
    start: Instant,
    elapsed0: f64,
    confirm_games: usize,
    confirm_cost: u64,
    /// An iteration whose best candidate awaits its confirmation. With the built-in evaluation
    /// the confirmation's games ride along with the next iteration's first batch (one round
    /// trip to the executor instead of two: it matters on a cluster, where each costs
    /// milliseconds). The next iteration's candidates do not depend on the confirmation, so the
    /// games and the numbers are the same as playing them one after the other; when the
    /// confirmation ends the run (the target reached), that next iteration is dropped as if
    /// never begun.
    waiting: Option<Waiting>,
    progress: &'a dyn Fn(u64, u64, f64, u64),
}

impl Step<'_> {
    fn reached(&self, ck: &Checkpoint) -> bool {
        reached(self.cfg, ck.best.as_ref())
    }

    /// Ends iteration `it`: its confirmation's evaluation (if it had one) may become the best;
    /// then its history row, the checkpoint (with the optimizer as it stands) and the progress.
    fn finish(&self, ck: &mut Checkpoint, it: u64, current: &Eval, confirmed: Option<(Vec<f64>, Eval)>, games_played: u64) -> Result<()> {
        if let Some((dna, confirmed)) = confirmed
            && ck.best.as_ref().is_none_or(|b| confirmed.f > b.eval.f)
        {
            ck.best = Some(Best { dna, eval: confirmed, iteration: it });
        }
        ck.games_played = games_played;
        ck.next_iteration = it + 1;
        ck.elapsed_s = self.elapsed0 + self.start.elapsed().as_secs_f64();
        let best_f = ck.best.as_ref().map_or(0.0, |b| b.eval.f);
        ck.history.push(Row {
            iteration: it,
            f: current.f,
            balance: current.balance,
            length: current.length,
            difference: current.difference,
            wins: current.wins_term,
            mean_turns: current.mean_turns,
            best_so_far: best_f,
            games: ck.games_played,
            elapsed_s: ck.elapsed_s,
            penalized: !current.all_played && self.cfg.fitness.all_played_penalty >= 0.0,
        });
        ck.finished = ck.games_played >= self.budget_games || self.reached(ck);
        crate::drive::save(self.ck_path, &*ck)?;
        write_history(self.dir, &ck.history)?;
        (self.progress)(ck.games_played.min(self.budget_games), self.budget_games, best_f, it);
        Ok(())
    }

    /// The waiting confirmation played alone (nothing to ride with).
    fn alone(&self, w: &Waiting) -> Result<Eval> {
        Ok(self.built.evaluate_groups(&[w.ride.group()])?.remove(0).remove(0))
    }

    fn finish_waiting(&self, ck: &mut Checkpoint, w: Waiting, confirmed: Eval) -> Result<()> {
        self.finish(ck, w.ride.iteration, &w.current, Some((w.ride.cand.0, confirmed)), w.games_before + self.confirm_cost)
    }
}

impl crate::drive::Search for Step<'_> {
    type Ck = Checkpoint;

    fn over(&self, ck: &Checkpoint) -> bool {
        let (games_played, best_known) = match &self.waiting {
            Some(w) => (w.games_before + self.confirm_cost, false),
            None => (ck.games_played, true),
        };
        ck.finished || games_played >= self.budget_games || (best_known && self.reached(ck))
    }

    /// Iterations done or waiting for their confirmation.
    fn begun(&self, ck: &Checkpoint) -> u64 {
        ck.history.len() as u64 + self.waiting.is_some() as u64
    }

    fn settle(&mut self, ck: &mut Checkpoint) -> Result<bool> {
        let Some(w) = self.waiting.take() else { return Ok(false) };
        let confirmed = self.alone(&w)?;
        self.finish_waiting(ck, w, confirmed)?;
        Ok(true)
    }

    fn step(&mut self, ck: &mut Checkpoint) -> Result<crate::drive::Flow> {
        let (cfg, codec, opts) = (self.cfg, self.codec, self.opts);
        let games_played = match &self.waiting {
            Some(w) => w.games_before + self.confirm_cost,
            None => ck.games_played,
        };
        let it = ck.next_iteration + self.waiting.is_some() as u64;
        let mut ctx = Ctx {
            codec,
            ev: self.built.ev,
            exec: &opts.exec,
            jobs: self.built.jobs,
            hook: opts.hook.as_deref(),
            seed: cfg.balance.seed,
            iteration: it,
            games_played,
            budget_games: self.budget_games,
            evals: Vec::new(),
            ride: self.waiting.as_ref().map(|w| w.ride.clone()),
            ridden: None,
        };
        // The optimizer as the waiting iteration left it: what its checkpoint holds.
        let before = self.waiting.is_some().then(|| ck.optimizer.clone());
        let current = ck.optimizer.step(&mut ctx)?;
        let mut games_played = ctx.games_played;
        if let Some(w) = self.waiting.take() {
            let confirmed = match ctx.ridden.take() {
                Some(e) => e,
                // The step played nothing: the confirmation plays alone.
                None => self.alone(&w)?,
            };
            let after = std::mem::replace(&mut ck.optimizer, before.expect("kept when an iteration waits"));
            self.finish_waiting(ck, w, confirmed)?;
            if ck.finished {
                // The run ends with the confirmation (the target reached): the step that rode
                // along never happened.
                return Ok(crate::drive::Flow::End);
            }
            ck.optimizer = after;
        }
        // Confirm the iteration's best candidate if it might beat the best so far.
        let top = ctx.evals.iter().max_by(|a, b| a.1.f.total_cmp(&b.1.f)).cloned();
        match top {
            Some((x, e)) if ck.best.as_ref().is_none_or(|b| e.f > b.eval.f) => {
                let dna = codec.full(&x);
                if sequential(cfg) {
                    // Played at once with the built-in games, also under ask/tell: a told
                    // evaluation is a summary, and a pool needs the games.
                    let program = codec.build(&dna)?.ok_or_else(|| anyhow!("an evaluated candidate is not valid"))?;
                    let best = ck.best.as_ref().map(|b| (b.eval.f, b.eval.f_se));
                    let c = super::sequential::confirm(
                        &self.built,
                        it,
                        &(dna.clone(), Some(program), CONFIRM),
                        CONFIRM,
                        best,
                        cfg.balance.target,
                    )?;
                    let confirmed = c.better.then_some((dna, c.eval));
                    self.finish(ck, it, &current, confirmed, games_played + c.games)?;
                    return Ok(crate::drive::Flow::Next);
                }
                match &opts.hook {
                    None => {
                        let program = codec.build(&dna)?.ok_or_else(|| anyhow!("an evaluated candidate is not valid"))?;
                        let ride = Ride { iteration: it, cand: (dna, Some(program), CONFIRM), games: self.confirm_games };
                        self.waiting = Some(Waiting { ride, current, games_before: games_played });
                    }
                    Some(hook) => {
                        let confirmed = hook(&self.built.request(it, true, &[(dna.clone(), CONFIRM)]))?
                            .into_iter()
                            .next()
                            .ok_or_else(|| anyhow!("no evaluation told for the confirmation; expected one"))?;
                        games_played += self.confirm_cost;
                        self.finish(ck, it, &current, Some((dna, confirmed)), games_played)?;
                    }
                }
            }
            _ => self.finish(ck, it, &current, None, games_played)?,
        }
        Ok(crate::drive::Flow::Next)
    }
}

/// history.csv (the numbers, the same on every rerun and resume) and timing.csv (the wall
/// clock, which is not).
fn write_history(dir: &Path, history: &[Row]) -> Result<()> {
    crate::drive::history::write(dir, history)
}

impl crate::drive::history::Row for Row {
    const STEP: &'static str = "iteration";

    fn header() -> &'static [&'static str] {
        &["iteration", "f", "balance", "length", "difference", "wins", "mean_turns", "best_so_far", "games", "penalized"]
    }

    fn cells(&self) -> Vec<String> {
        vec![
            self.iteration.to_string(),
            format!("{:.5}", self.f),
            format!("{:.5}", self.balance),
            format!("{:.5}", self.length),
            format!("{:.5}", self.difference),
            format!("{:.5}", self.wins),
            format!("{:.2}", self.mean_turns),
            format!("{:.5}", self.best_so_far),
            self.games.to_string(),
            (self.penalized as u8).to_string(),
        ]
    }

    fn timing(&self) -> (u64, f64) {
        (self.iteration, self.elapsed_s)
    }
}

/// best_encounter.toml (through [`content::Writer`]): readable, and loadable back by `verify`
/// and `run --params`.
fn write_best(cfg: &BalanceConfig, codec: &Codec, dir: &Path, b: &Best) -> Result<()> {
    let e = &b.eval;
    let band = target_band(&cfg.fitness, 0.9).map_or("none".into(), |(a, z)| format!("{a}–{z}"));
    let header = format!(
        "# playforge balance: the best encounter of `{}` (seed {}, optimizer {}, iteration {}).\n\
         # F = {:.4}{} confirmed over {} games: balance {:.3}, length {:.3} (mean {:.1} turns; band {band}), difference {:.3}, wins {:.3}.\n\
         # Wins {} / {}, draws {}.\n\
         # Check it: playforge verify <this file> --games 200. Play it: playforge run {} --params <this file>.\n",
        cfg.balance.name,
        cfg.balance.seed,
        cfg.balance.optimizer,
        b.iteration,
        e.f,
        if e.f_se > 0.0 {
            let sure = if e.sure { "sure of" } else { "not sure of" };
            format!(" ± {:.4} (standard error; {sure} the target {})", e.f_se, cfg.balance.target)
        } else {
            String::new()
        },
        e.games,
        e.balance,
        e.length,
        e.mean_turns,
        e.difference,
        e.wins_term,
        e.wins[0],
        e.wins[1],
        e.draws,
        cfg.balance.game.display()
    );
    let mut w = content::Writer::new(&header, &cfg.balance.game, cfg.balance.turn_order.as_deref());
    w.key("config", "\"config.toml\"");
    w.key("fitness", &format!("{:.6}", e.f));
    let teams = codec.team_values(&b.dna);
    for (t, vals) in teams.iter().enumerate() {
        let name = format!("team.{}", toml::Value::String(codec.team_names[t].clone()));
        w.table(None, &name, vals.iter().map(|(n, v)| (content::quoted(n), num(*v))));
    }
    let others = codec.others();
    if !others.is_empty() {
        let rows = others.iter().map(|(n, v)| (content::quoted(n), num(*v)));
        w.table(Some("Parameters in no team (held by [parameters] or at the game's value)."), "held", rows);
    }
    write_atomic(&dir.join("best_encounter.toml"), w.finish().as_bytes())?;
    let mut d = String::from("# The best DNA: one line per team, genes in [0, 1] in the order of best_encounter.toml.\n");
    for t in 0..2 {
        let genes: Vec<String> = codec.teams[t].iter().map(|&g| format!("{:.6}", b.dna[g])).collect();
        d.push_str(&format!("{}: {}\n", codec.team_names[t], genes.join(",")));
    }
    write_atomic(&dir.join("best_dna.txt"), d.as_bytes())?;
    Ok(())
}

/// An encounter file read back: the game, its turn order, the config it came from, overrides.
pub struct EncounterFile {
    pub game: PathBuf,
    pub turn_order: Option<String>,
    pub config: Option<PathBuf>,
    pub overrides: Vec<(String, f64)>,
}

/// Reads a `best_encounter.toml` (or any content file with parameter values: a generated
/// `best.toml` plays with `run --params` too).
pub fn load_encounter(path: &Path) -> Result<EncounterFile> {
    let c = content::Content::read(path)?;
    if c.values.is_empty() {
        bail!("{}: no [team.<name>] tables of parameter values; expected a best_encounter.toml", path.display());
    }
    let config = c.str("config").map(|f| path.parent().unwrap_or(Path::new(".")).join(f));
    Ok(EncounterFile { game: c.game, turn_order: c.turn_order, config, overrides: c.values })
}

fn write_replays(cfg: &BalanceConfig, codec: &Codec, ev: &Evaluator, dir: &Path, b: &Best) -> Result<()> {
    let program = codec.build(&b.dna)?.ok_or_else(|| anyhow!("the best encounter is not valid"))?;
    let n = cfg.balance.replays as usize;
    let jobs: Vec<(usize, usize)> = (0..n).map(|k| (k % ev.n_pairs(), k / ev.n_pairs())).collect();
    let reps = jobs
        .par_iter()
        .map(|&(p, k)| -> Result<(String, Replay)> {
            let mut moves = Vec::new();
            let seed = derive(cfg.balance.seed, u64::MAX, p as u64, k as u64);
            let o = ev.play(&program, p, seed, Some(&mut moves))?;
            let result = match o.winner {
                Some(w) => program.players.get(w as usize).cloned().unwrap_or_default(),
                None => "draw".into(),
            };
            let pair = &cfg.evaluation.pairs[p];
            let rep = Replay {
                game: crate::report::run_dir::game_path(&cfg.balance.game),
                turn_order: cfg.balance.turn_order.clone(),
                params: codec.overrides(&b.dna),
                players: vec![pair[0].clone(), pair[1].clone()],
                moves,
                result,
                chance_seed: 0,
                overlays: Vec::new(),
            };
            Ok((format!("{}-{k}.json", ev.pair_name(p)).replace(' ', "_"), rep))
        })
        .collect::<Result<Vec<_>>>()?;
    for (name, rep) in reps {
        write_atomic(&dir.join("replays").join(name), serde_json::to_string_pretty(&rep)?.as_bytes())?;
    }
    Ok(())
}

/// convergence.png: F and the best so far, then the three terms, over iterations (Fig. 4.3).
fn convergence_chart(cfg: &BalanceConfig, dir: &Path, h: &[Row]) -> Result<()> {
    use chart::{Panel, Series};
    let pts = |f: &dyn Fn(&Row) -> f64| h.iter().map(|r| (r.iteration as f64, f(r))).collect::<Vec<_>>();
    let s = |name: &str, points| Series::line(name, points);
    let target = h.iter().map(|r| (r.iteration as f64, cfg.balance.target)).collect();
    let panels = [
        Panel {
            title: "combined fitness F".into(),
            x_label: "iteration".into(),
            y_label: "F".into(),
            series: {
                let mut v = vec![s("current F", pts(&|r| r.f)), s("best so far (confirmed)", pts(&|r| r.best_so_far)), s("target", target)];
                // Why F fell to (almost) 0: the all-played penalty, marked where it struck.
                let hit: Vec<(f64, f64)> = h.iter().filter(|r| r.penalized).map(|r| (r.iteration as f64, r.f)).collect();
                if !hit.is_empty() {
                    v.push(Series { markers: true, ..Series::line("penalty: a side never moved", hit) });
                }
                v
            },
        },
        Panel {
            title: "terms of the current point".into(),
            x_label: "iteration".into(),
            y_label: "term".into(),
            series: vec![
                s("balance 1 − H", pts(&|r| r.balance)),
                s("length L", pts(&|r| r.length)),
                s("difference D", pts(&|r| r.difference)),
            ]
            .into_iter()
            .chain((cfg.fitness.wins > 0.0).then(|| s("win balance W", pts(&|r| r.wins))))
            .collect(),
        },
    ];
    let title = format!("{} — {} (seed {})", cfg.balance.name, cfg.balance.optimizer, cfg.balance.seed);
    chart::line_panels(&dir.join("convergence.png"), &title, &panels, 1000, 360).map_err(|e| anyhow!("convergence.png: {e}"))
}
