//! The generator's loop: iterations of the chosen algorithm until the budget (in games) is
//! spent, a history row and a checkpoint after every iteration, the outputs at the end (or on
//! Ctrl-C).
//!
//! - `cma`: one answer. Separable CMA-ES ([`SepCma`]) ranks a generation by (feasible, F); the
//!   generation's best is confirmed on fresh seeds before it can become the best so far.
//! - `map-elites`: a map. First `initial` random candidates, then per iteration `batch` mutants
//!   (Gaussian, σ in gene units) of elites drawn uniformly from the archive.
//! - `cma-me`: a map. `emitters` improvement emitters (Fontaine et al. 2020), each a CMA-ES,
//!   take turns; a generation is ranked by what it does to the archive (new cells first by F,
//!   then improvements by their gain, then the rest), and an emitter that adds nothing restarts
//!   at a random elite.
//! - `[qd] search_on = "estimates"` (a second algorithm; `"confirmed"` is the first): the two map
//!   searches read a map of their own that takes every feasible candidate by its evaluation, as
//!   pyribs's archive does, and CMA-ME ranks infeasible candidates by their `violation`; the map
//!   written out still takes confirmed candidates only.
//!
//! Noise is handled as balance does: every candidate of an iteration plays on the same game
//! seeds (common random numbers), and a candidate enters the map (or becomes the best) only with
//! the numbers of its confirmation, `confirm_games` games per table on fresh seeds. All streams
//! derive from (seed, iteration, candidate, game), so a run on 1 or 16 threads, on `--ray`, or
//! resumed from its checkpoint gives the same numbers.

use super::archive::{Archive, Elite, Status};
use super::config::GenerateConfig;
use super::jobs::{GenerateContext, GenerateGame, Setup};
pub use super::outputs::{Row, candidate_toml, elite_name};
use super::outputs::{write_history, write_outputs};
use super::play::GameRecord;
use super::quality::{Eval, Settled};
use super::{mae, revisit, sequential};
use crate::drive::fanout;
use crate::evolve::cma::SepCma;
use crate::exec::Executor;
use crate::report::write_atomic;
use crate::rng::{Rng, stream};
use anyhow::{Result, anyhow, bail};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Stream tags (the `individual` slot) for randomness that is not one candidate's.
const PROPOSE: u64 = 1 << 40;
const CRN: u64 = 1 << 41;
const CONFIRM: u64 = 1 << 42;
const REVISIT: u64 = 1 << 43;
/// The `generation` slot of `verify`'s games: never an iteration of a run.
pub const VERIFY: u64 = u64::MAX - 1;

/// The algorithm's state between iterations.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub enum Search {
    Cma(SepCma),
    MapElites,
    /// CMA-ME; with `thresholds`, CMA-MAE (each cell's soft threshold, [`super::mae`]).
    CmaMe {
        emitters: Vec<SepCma>,
        next: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thresholds: Option<BTreeMap<usize, f64>>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    pub config: String,
    pub next_iteration: u64,
    pub search: Search,
    pub archive: Archive,
    /// `search_on = "estimates"`: the map the search reads, every candidate by its estimates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explore: Option<Archive>,
    pub best: Option<Elite>,
    pub history: Vec<Row>,
    pub games_played: u64,
    pub elapsed_s: f64,
    pub finished: bool,
}

impl Checkpoint {
    /// Checks a checkpoint read back before anything uses it: the search's kind against the
    /// config's algorithm, CMA-ES states against the config's (dimension, λ, σ₀; see
    /// [`SepCma::validate`]) and as many emitters as it asks, the maps' shape against the
    /// descriptors, every vector's length against the genes, genes in [0, 1], the counters
    /// against the budget and the history. The error names `path`, the field and what was
    /// expected.
    pub fn validate(&self, path: &Path, cfg: &GenerateConfig, genes: usize) -> Result<()> {
        self.check(cfg, genes).map_err(|what| anyhow!(crate::report::run_dir::bad_checkpoint(path, &what)))
    }

    fn check(&self, cfg: &GenerateConfig, n: usize) -> std::result::Result<(), String> {
        use crate::evolve::cma::check_unit;
        let s = &cfg.generate;
        let kind = match &self.search {
            Search::Cma(_) => "cma",
            Search::MapElites => "map-elites",
            Search::CmaMe { thresholds: None, .. } => "cma-me",
            Search::CmaMe { thresholds: Some(_), .. } => "cma-mae",
        };
        if kind != s.algorithm {
            return Err(format!("search is a {kind} state; expected a state of the config's algorithm \"{}\"", s.algorithm));
        }
        if self.next_iteration > s.max_evaluations {
            return Err(format!(
                "next_iteration = {}; expected at most max_evaluations = {} (an iteration evaluates at least once)",
                self.next_iteration, s.max_evaluations
            ));
        }
        if self.history.len() as u64 != self.next_iteration {
            return Err(format!(
                "history has {} rows; expected next_iteration = {} (one per iteration)",
                self.history.len(),
                self.next_iteration
            ));
        }
        if !(self.elapsed_s.is_finite() && self.elapsed_s >= 0.0) {
            return Err(format!("elapsed_s = {}; expected seconds ≥ 0", self.elapsed_s));
        }
        if self.games_played > MAX_GAMES_PLAYED {
            return Err(format!("games_played = {}; expected at most 2^62", self.games_played));
        }
        let expected = SepCma::new(n, cfg.cma.lambda, cfg.cma.sigma0);
        match &self.search {
            Search::Cma(c) => c.validate(&expected, self.next_iteration).map_err(|e| format!("search cma {e}"))?,
            Search::MapElites => {}
            Search::CmaMe { emitters, next, thresholds } => {
                if thresholds.iter().flatten().any(|(c, t)| *c >= Archive::new(&cfg.descriptors).n_cells() || !t.is_finite()) {
                    return Err("search thresholds hold a cell outside the map or a threshold that is not a number".into());
                }
                if *next as u64 > self.next_iteration {
                    return Err(format!("search next = {next}; expected at most {} (the iterations run)", self.next_iteration));
                }
                if emitters.len() != cfg.qd.emitters {
                    return Err(format!("search has {} emitters; expected {} (the config's qd.emitters)", emitters.len(), cfg.qd.emitters));
                }
                for (k, e) in emitters.iter().enumerate() {
                    e.validate(&expected, self.next_iteration).map_err(|e| format!("emitter {k} {e}"))?;
                }
            }
        }
        let elite = |what: &str, e: &Elite| -> std::result::Result<(), String> {
            check_unit(&format!("{what} x"), &e.x, n)?;
            let v = &e.eval;
            // A weighted mean of target scores in [0, 1] (which rounding may pass by an ulp).
            if !(-1e-9..=1.0 + 1e-9).contains(&v.f) {
                return Err(format!("{what} eval f = {}; expected a quality in [0, 1]", v.f));
            }
            for (name, got, want) in [
                ("measures", v.measures.len(), cfg.measures.len()),
                ("targets", v.targets.len(), cfg.targets.len()),
                ("descriptors", v.descriptors.len(), cfg.descriptors.len()),
            ] {
                // An ask/tell user may tell an evaluation without its estimates.
                if got != want && got != 0 {
                    return Err(format!("{what} eval has {got} {name}; expected {want} (the config's)"));
                }
            }
            if let Some(p) = &e.pool {
                p.check().map_err(|m| format!("{what} {m}"))?;
            }
            if e.iteration >= self.next_iteration {
                return Err(format!("{what} iteration = {}; expected an iteration run (below {})", e.iteration, self.next_iteration));
            }
            Ok(())
        };
        let map = |what: &str, a: &Archive| -> std::result::Result<(), String> {
            let want = Archive::new(&cfg.descriptors);
            if a.dims != want.dims {
                return Err(format!("{what} dims = {:?}; expected {:?} (the config's descriptors)", a.dims, want.dims));
            }
            let cells = a.n_cells();
            for (c, e) in &a.cells {
                if *c >= cells {
                    return Err(format!("{what} cell {c}; expected a cell below {cells}"));
                }
                elite(&format!("{what} cell {c}"), e)?;
            }
            Ok(())
        };
        map("archive", &self.archive)?;
        let explores = cfg.is_map() && cfg.qd.search_on == "estimates";
        match (&self.explore, explores) {
            (Some(a), true) => map("explore", a)?,
            (None, false) => {}
            (Some(_), false) => return Err("explore is a map; expected none (the config searches on confirmed elites)".into()),
            (None, true) => return Err("explore is missing; expected the map of estimates (search_on = \"estimates\")".into()),
        }
        if let Some(b) = &self.best {
            elite("best", b)?;
        }
        Ok(())
    }
}

/// The most games a checkpoint may count: 2^62, so that the counters cannot overflow in the
/// loop (a budget is at most 10^14 games per table).
pub const MAX_GAMES_PLAYED: u64 = 1 << 62;

/// What a checkpoint belongs to: the resolved config without what depends on where the run
/// started or where its folder is (the game's path, which the hash of its text and map stands
/// for, and `out`), then the game's hash; formula files are named absolutely. A run folder
/// moved (`--out` elsewhere) or a run resumed from another working folder is still the same run.
pub fn checkpoint_key(cfg: &GenerateConfig, game_hash: u64) -> Result<String> {
    let mut c = cfg.clone();
    c.generate.game = c.generate.game.file_name().map(PathBuf::from).unwrap_or_default();
    c.generate.out = PathBuf::new();
    for p in &mut c.players {
        if let Some(f) = &mut p.formula_file {
            *f = crate::report::run_dir::game_path(f);
        }
    }
    Ok(format!("{}\n# game {game_hash:016x}\n", toml::to_string(&c)?))
}

/// A batch of candidates to evaluate, as an ask/tell user gets it ([`super::asktell`]): the
/// iteration, whether it is a confirmation, the games per table the built-in evaluation plays,
/// and each candidate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalRequest {
    pub iteration: u64,
    pub confirm: bool,
    pub games: u64,
    pub candidates: Vec<Candidate>,
}

/// One candidate: its genes in [0, 1], the parameter values they make, its games' stream tag.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Candidate {
    pub genes: Vec<f64>,
    #[serde(default)]
    pub values: Vec<(String, f64)>,
    #[serde(default)]
    pub who: u64,
}

/// An evaluation other than the built-in games: the candidates' evaluations, in order.
pub type EvalHook = dyn Fn(&EvalRequest) -> Result<Vec<Eval>> + Send + Sync;

/// How to run: the options every search command shares, with a user's evaluation (ask/tell).
pub type RunOptions = crate::drive::RunOptions<EvalHook>;

/// What a run did.
pub struct Outcome {
    pub dir: PathBuf,
    pub best: Option<Elite>,
    pub archive: Archive,
    pub history: Vec<Row>,
    pub games_played: u64,
    pub budget_games: u64,
    pub interrupted: bool,
    pub elapsed_s: f64,
}

/// `<out>/<name>/<algorithm>-seed-<seed>/`.
pub fn out_dir(cfg: &GenerateConfig) -> PathBuf {
    cfg.generate.out.join(&cfg.generate.name).join(format!("{}-seed-{}", cfg.generate.algorithm, cfg.generate.seed))
}

/// Where candidates' games run, and how they are scored.
pub struct Games<'a> {
    pub setup: &'a Setup,
    pub exec: &'a Executor,
    pub ctx: &'a GenerateContext,
    pub seed: u64,
    /// The user's evaluation, when an ask/tell run has one.
    pub hook: Option<&'a EvalHook>,
}

impl Games<'_> {
    /// The request of candidates (search vector, stream tag).
    pub fn request(&self, it: u64, confirm: bool, cands: &[(Vec<f64>, u64)], games: usize) -> EvalRequest {
        let candidates =
            cands.iter().map(|(x, who)| Candidate { genes: x.clone(), values: self.setup.codec.overrides(x), who: *who }).collect();
        EvalRequest { iteration: it, confirm, games: games as u64, candidates }
    }

    /// Evaluates candidates: the user's evaluation when there is one, else the games.
    pub fn evaluate_or_ask(&self, it: u64, confirm: bool, cands: &[(Vec<f64>, u64)], games: usize) -> Result<Vec<Eval>> {
        match self.hook {
            None => self.evaluate(it, cands, games, confirm),
            Some(_) if cands.is_empty() => Ok(Vec::new()),
            Some(hook) => {
                let evals = hook(&self.request(it, confirm, cands, games))?;
                if evals.len() != cands.len() {
                    bail!("{} evaluations told for {} candidates; expected one per candidate", evals.len(), cands.len());
                }
                let (nd, nm) = (self.setup.scorer.n_descriptors(), self.ctx.config.measures.len());
                for e in &evals {
                    if e.descriptors.len() != nd {
                        bail!("an evaluation with {} descriptors; expected {nd}, one per [[descriptor]]", e.descriptors.len());
                    }
                    if !e.measures.is_empty() && e.measures.len() != nm {
                        bail!("an evaluation with {} measures; expected none or {nm}, one per [[measure]]", e.measures.len());
                    }
                }
                Ok(evals)
            }
        }
    }

    /// The built-in evaluation of a request (what an ask/tell user gets back from `evaluate`).
    pub fn evaluate_request(&self, req: &EvalRequest) -> Result<Vec<Eval>> {
        let n = self.setup.codec.genes.len();
        for c in &req.candidates {
            if c.genes.len() != n || c.genes.iter().any(|g| !(0.0..=1.0).contains(g)) {
                bail!("a candidate with {} genes; expected {n} genes, each in [0, 1]", c.genes.len());
            }
        }
        // A candidate that breaks a constraint (another optimizer's, which cannot know them) is
        // infeasible without a game; the others are played.
        let mut valid = Vec::with_capacity(req.candidates.len());
        for c in &req.candidates {
            valid.push(self.setup.codec.build(&c.genes)?.is_some());
        }
        let cands: Vec<(Vec<f64>, u64)> =
            req.candidates.iter().zip(&valid).filter(|(_, v)| **v).map(|(c, _)| (c.genes.clone(), c.who)).collect();
        // 0 games: the config's `games` (`confirm_games` for a confirmation).
        let g = &self.ctx.config.generate;
        let games = match (req.games, req.confirm) {
            (0, false) => g.games,
            (0, true) => g.confirm_games,
            (n, _) => n,
        };
        let mut played = self.evaluate(req.iteration, &cands, games as usize, req.confirm)?.into_iter();
        Ok(valid
            .iter()
            .map(|&v| {
                if v {
                    played.next().expect("one evaluation per valid candidate")
                } else {
                    Eval {
                        f: 0.0,
                        feasible: false,
                        why: "breaks a constraint of the game or the config".into(),
                        measures: Vec::new(),
                        targets: Vec::new(),
                        descriptors: Vec::new(),
                        games: 0,
                        violation: 10.0,
                    }
                }
            })
            .collect())
    }

    /// Plays and scores candidates (search vector, stream tag): `games` games per table each,
    /// candidate `who`'s game g at table t of iteration `it` on the stream (seed, it, who, t·games + g);
    /// a confirmation is judged strictly (`certain` requirements by their intervals).
    pub fn evaluate(&self, it: u64, cands: &[(Vec<f64>, u64)], games: usize, confirm: bool) -> Result<Vec<Eval>> {
        let scorer = if confirm { &self.setup.scorer } else { &self.setup.loose };
        Ok(self.records(it, cands, games)?.iter().map(|mine| scorer.score(&mine.iter().map(Vec::as_slice).collect::<Vec<_>>())).collect())
    }

    /// Plays candidates' games as [`Games::evaluate`] does and returns each one's records, table
    /// by table.
    pub fn records(&self, it: u64, cands: &[(Vec<f64>, u64)], games: usize) -> Result<Vec<Vec<Vec<GameRecord>>>> {
        let tables = self.setup.tables().len();
        let mut built = Vec::with_capacity(cands.len());
        for (x, who) in cands {
            built.push((x.as_slice(), *who, self.setup.built(x).map_err(|e| anyhow!("{e} (genes {x:?})"))?));
        }
        let group = fanout::Group { iteration: it, games, cands: built };
        let records =
            fanout::play::<GenerateGame, _, _>(self.exec, self.ctx, self.seed, tables, &[group], |b, t, seed| self.setup.play(b, t, seed))?
                .remove(0);
        Ok(records.into_iter().map(|mine| mine.chunks(games.max(1)).map(<[GameRecord]>::to_vec).collect()).collect())
    }
}

/// Confirms the candidates `worth` (indices into `cands`, screened on `screened`) sequentially
/// ([`super::sequential`]) against the map's elites or the best so far; the trials and the
/// games they played.
#[allow(clippy::too_many_arguments)]
fn confirm_sequentially(
    cfg: &GenerateConfig,
    setup: &Setup,
    games: &Games,
    ck: &Checkpoint,
    it: u64,
    worth: &[usize],
    cands: &[(Vec<f64>, bool)],
    mut screened: Vec<Vec<Vec<GameRecord>>>,
) -> Result<(Vec<sequential::Trial>, u64)> {
    let s = &cfg.generate;
    let scorer = &setup.scorer;
    let trials: Vec<(Vec<f64>, Vec<Vec<GameRecord>>)> =
        worth.iter().map(|&i| (cands[i].0.clone(), std::mem::take(&mut screened[i]))).collect();
    let incumbent = |e: &Eval| {
        let el = if cfg.is_map() { ck.archive.incumbent(e) } else { ck.best.as_ref() };
        el.map(|el| (el.eval.f, scorer.f_se(&el.eval.targets)))
    };
    let mut play = |look: usize, who: &[usize], batch: u64| {
        let tagged: Vec<(Vec<f64>, u64)> =
            who.iter().map(|&k| (cands[worth[k]].0.clone(), sequential::tag(CONFIRM, look, worth[k]))).collect();
        games.records(it, &tagged, batch as usize)
    };
    sequential::confirm(scorer, trials, s.confirm_games, s.confirm_alpha, &incumbent, &mut play)
}

/// A valid point near `sample()`, or a random one (flagged) after 30 tries.
fn valid_near(setup: &Setup, rng: &mut Rng, sample: &dyn Fn(&mut Rng) -> Vec<f64>) -> Result<(Vec<f64>, bool)> {
    for _ in 0..30 {
        let x = sample(rng);
        if setup.codec.build(&x)?.is_some() {
            return Ok((x, true));
        }
    }
    Ok((setup.codec.random(rng)?, false))
}

/// `n` random valid candidates of iteration `it`.
fn randoms(setup: &Setup, seed: u64, it: u64, n: usize) -> Result<Vec<(Vec<f64>, bool)>> {
    (0..n).into_par_iter().map(|i| Ok((setup.codec.random(&mut stream(seed, it, i as u64, 7))?, true))).collect()
}

/// Runs (or resumes) a generate job; `progress(games, budget, message)`.
pub fn run(cfg: &GenerateConfig, cfg_path: &Path, cfg_text: &str, opts: &RunOptions, progress: &dyn Fn(u64, u64, &str)) -> Result<Outcome> {
    let setup = Setup::new(cfg, cfg_path, cfg_text)?;
    let ctx = GenerateContext::new(cfg, cfg_path, cfg_text, &setup.codec)?;
    let dir = out_dir(cfg);
    let run_dir = crate::report::run_dir::RunDir::open(&dir)?;
    let ck_key = checkpoint_key(cfg, setup.codec.game_hash())?;
    // What older versions wrote: the resolved config as it was, paths and all.
    let old_key = format!("{}\n# game {:016x}\n", toml::to_string(cfg)?, setup.codec.game_hash());
    let ck_path = dir.join("checkpoint.json");
    let s = &cfg.generate;
    if s.confirm == "sequential" && opts.hook.is_some() {
        bail!(
            "confirm = \"sequential\" pools the games it plays itself; expected the built-in evaluation (run it with `playforge generate`, or set confirm = \"fixed\" to evaluate through ask/tell)"
        );
    }
    let tables = setup.tables().len() as u64;
    let budget_games = s.max_evaluations * s.games * tables;
    let n = setup.codec.genes.len();
    let expect = crate::drive::Expect {
        path: &ck_path,
        key: &ck_key,
        legacy: std::slice::from_ref(&old_key),
        missing: Some("config, algorithm and seed"),
    };
    let stored = crate::drive::resume(opts, &expect, |ck: &Checkpoint| &ck.config, |ck| ck.validate(&ck_path, cfg, n))?
        .map(|ck| Checkpoint { config: ck_key.clone(), ..ck });
    let mut ck = if let Some(ck) = stored {
        ck
    } else {
        run_dir.clear()?;
        let search = match s.algorithm.as_str() {
            "cma" => Search::Cma(SepCma::new(n, cfg.cma.lambda, cfg.cma.sigma0)),
            "map-elites" => Search::MapElites,
            kind => Search::CmaMe {
                emitters: vec![SepCma::new(n, cfg.cma.lambda, cfg.cma.sigma0); cfg.qd.emitters],
                next: 0,
                thresholds: (kind == "cma-mae").then(BTreeMap::new),
            },
        };
        Checkpoint {
            config: ck_key.clone(),
            next_iteration: 0,
            search,
            archive: Archive::new(&cfg.descriptors),
            explore: (cfg.is_map() && cfg.qd.search_on == "estimates").then(|| Archive::new(&cfg.descriptors)),
            best: None,
            history: Vec::new(),
            games_played: 0,
            elapsed_s: 0.0,
            finished: false,
        }
    };
    // The config with its paths made absolute: `verify` reads it from anywhere.
    write_atomic(&dir.join("config.toml"), toml::to_string(&ctx.config)?.as_bytes())?;
    let games = Games { setup: &setup, exec: &opts.exec, ctx: &ctx, seed: s.seed, hook: opts.hook.as_deref() };
    let mut step = Step {
        cfg,
        setup: &setup,
        games: &games,
        dir: &dir,
        ck_path: &ck_path,
        budget_games,
        tables,
        start: Instant::now(),
        elapsed0: ck.elapsed_s,
        warned: false,
        progress,
    };
    let interrupted = crate::drive::run(&mut step, &mut ck, opts.max_iterations)?.interrupted;
    write_outputs(cfg, &setup, &dir, ck.best.as_ref(), &ck.archive, &ck.history)?;
    Ok(Outcome {
        dir,
        best: ck.best,
        archive: ck.archive,
        history: ck.history,
        games_played: ck.games_played,
        budget_games,
        interrupted,
        elapsed_s: ck.elapsed_s,
    })
}

/// One iteration of the generator as the run loop drives it ([`crate::drive::run`]).
struct Step<'a> {
    cfg: &'a GenerateConfig,
    setup: &'a Setup,
    games: &'a Games<'a>,
    dir: &'a Path,
    ck_path: &'a Path,
    budget_games: u64,
    tables: u64,
    start: Instant,
    elapsed0: f64,
    /// Whether the config's `budget_minutes` was passed (said once).
    warned: bool,
    progress: &'a dyn Fn(u64, u64, &str),
}

impl crate::drive::Search for Step<'_> {
    type Ck = Checkpoint;

    fn over(&self, ck: &Checkpoint) -> bool {
        ck.finished || ck.games_played >= self.budget_games
    }

    fn begun(&self, ck: &Checkpoint) -> u64 {
        ck.next_iteration
    }

    /// Propose, evaluate on common random numbers, confirm on fresh seeds what might count,
    /// move the search distributions; then the history row, the checkpoint and the progress.
    fn step(&mut self, ck: &mut Checkpoint) -> Result<crate::drive::Flow> {
        let (cfg, setup, games, dir, ck_path, budget_games, tables) =
            (self.cfg, self.setup, self.games, self.dir, self.ck_path, self.budget_games, self.tables);
        let (start, elapsed0, progress) = (self.start, self.elapsed0, self.progress);
        let s = &cfg.generate;
        let it = ck.next_iteration;
        let seed = s.seed;
        let mut rng = stream(seed, it, PROPOSE, 0);
        // 1. Propose: (search vector, drawn from the search distribution).
        // The map the search reads: its own (estimates) or the result's (confirmed elites).
        let searched = ck.explore.as_ref().unwrap_or(&ck.archive);
        let first = it == 0 || (cfg.is_map() && searched.cells.is_empty());
        let cands: Vec<(Vec<f64>, bool)> = match &mut ck.search {
            Search::Cma(c) => {
                if c.mean.is_none() || c.sigma < cfg.cma.sigma_min {
                    c.restart(setup.codec.random(&mut rng)?);
                }
                let c: &SepCma = c;
                (0..c.lambda)
                    .into_par_iter()
                    .map(|i| valid_near(setup, &mut stream(seed, it, i as u64, 7), &|r| c.sample(r)))
                    .collect::<Result<_>>()?
            }
            Search::MapElites if first => randoms(setup, seed, it, cfg.qd.initial)?,
            Search::MapElites => {
                let elites: Vec<&Elite> = searched.cells.values().collect();
                let sigma = cfg.qd.sigma;
                (0..cfg.qd.batch)
                    .into_par_iter()
                    .map(|i| {
                        let mut r = stream(seed, it, i as u64, 7);
                        let parent = &elites[r.random_range(0..elites.len())].x;
                        valid_near(setup, &mut r, &|r| {
                            parent
                                .iter()
                                .map(|&v| {
                                    let z: f64 = StandardNormal.sample(r);
                                    (v + sigma * z).clamp(0.0, 1.0)
                                })
                                .collect()
                        })
                    })
                    .collect::<Result<_>>()?
            }
            Search::CmaMe { .. } if first => randoms(setup, seed, it, cfg.qd.initial)?,
            Search::CmaMe { emitters, next, .. } => {
                let k = *next % emitters.len();
                let e = &mut emitters[k];
                if e.mean.is_none() || e.sigma < cfg.cma.sigma_min {
                    let elites: Vec<&Elite> = searched.cells.values().collect();
                    e.restart(elites[rng.random_range(0..elites.len())].x.clone());
                }
                let e: &SepCma = e;
                (0..e.lambda)
                    .into_par_iter()
                    .map(|i| valid_near(setup, &mut stream(seed, it, i as u64, 7), &|r| e.sample(r)))
                    .collect::<Result<_>>()?
            }
        };
        // 2. Evaluate on common random numbers.
        let tagged: Vec<(Vec<f64>, u64)> =
            cands.iter().enumerate().map(|(i, (x, _))| (x.clone(), if s.common_random_numbers { CRN } else { i as u64 })).collect();
        // A sequential confirmation pools the games a candidate was screened on.
        let sequential = s.confirm == "sequential";
        let (evals, screened) = if sequential {
            let recs = games.records(it, &tagged, s.games as usize)?;
            let evals = recs.iter().map(|r| setup.loose.score(&r.iter().map(Vec::as_slice).collect::<Vec<_>>())).collect();
            (evals, recs)
        } else {
            (games.evaluate_or_ask(it, false, &tagged, s.games as usize)?, Vec::new())
        };
        let mut played = cands.len() as u64 * s.games * tables;
        // 3. Confirm what might count, on fresh seeds.
        // What each candidate would do to the searched map as it stood (CMA-ME ranks by it);
        // searching on estimates, an infeasible candidate ranks by how far it is from feasible.
        let st: Vec<(Status, f64)> = match &ck.explore {
            None => evals.iter().map(|e| ck.archive.status(e)).collect(),
            Some(explore) => evals
                .iter()
                .map(|e| match explore.status(e) {
                    (Status::Infeasible, _) => (Status::Infeasible, -e.violation),
                    s => s,
                })
                .collect(),
        };
        let counts = |e: &Eval| matches!(ck.archive.status(e).0, Status::New | Status::Improves);
        let worth: Vec<usize> = if sequential {
            // The race decides: every candidate is in doubt until its screening games settle it.
            (0..cands.len()).collect()
        } else if cfg.is_map() {
            (0..cands.len()).filter(|&i| counts(&evals[i])).collect()
        } else {
            let top = (0..cands.len()).max_by(|&a, &b| {
                let (ka, kb) = (evals[a].rank_key(), evals[b].rank_key());
                ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(b.cmp(&a))
            });
            top.into_iter().filter(|&i| evals[i].feasible && ck.best.as_ref().is_none_or(|b| evals[i].f > b.eval.f)).collect()
        };
        let to_confirm: Vec<(Vec<f64>, u64)> = worth.iter().map(|&i| (cands[i].0.clone(), CONFIRM + i as u64)).collect();
        let mut added = 0;
        if sequential && cfg.qd.revisit > 0 {
            // The elites with the fewest games gather more first, so that challengers race
            // against the newest evidence.
            let mut play = |who: &[(usize, Vec<f64>)], batch: u64| {
                let tagged: Vec<(Vec<f64>, u64)> = who.iter().map(|(c, x)| (x.clone(), REVISIT | *c as u64)).collect();
                games.records(it, &tagged, batch as usize)
            };
            played += revisit::revisit(&mut ck.archive, &setup.scorer, cfg.qd.revisit, s.confirm_games, s.games, &mut play)?.games;
        }
        if sequential {
            let trials = confirm_sequentially(cfg, setup, games, ck, it, &worth, &cands, screened)?;
            played += trials.1;
            for t in trials.0.into_iter().filter(|t| t.verdict == Settled::Pass) {
                let elite = Elite { x: t.x, eval: t.eval, iteration: it, pool: Some(t.pool) };
                if cfg.is_map() {
                    added += ck.archive.place(elite) as u64;
                } else if elite.eval.feasible && ck.best.as_ref().is_none_or(|b| elite.eval.f > b.eval.f) {
                    ck.best = Some(elite);
                }
            }
        } else {
            let confirmed = games.evaluate_or_ask(it, true, &to_confirm, s.confirm_games as usize)?;
            played += to_confirm.len() as u64 * s.confirm_games * tables;
            for (&i, e) in worth.iter().zip(&confirmed) {
                if cfg.is_map() {
                    added += ck.archive.insert(&cands[i].0, e, it) as u64;
                } else if e.feasible && ck.best.as_ref().is_none_or(|b| e.f > b.eval.f) {
                    ck.best = Some(Elite { x: cands[i].0.clone(), eval: e.clone(), iteration: it, pool: None });
                }
            }
        }
        if cfg.is_map() {
            ck.best = ck.archive.best().cloned();
        } else if sequential && s.stop == "target" {
            // An answer at F = 1 whose games cannot yet say so with confidence plays more.
            let z = |b: &Elite| sequential::z(s.confirm_alpha, 1, b.eval.games);
            if let Some(b) = ck.best.as_mut().filter(|b| b.eval.f >= 1.0 && !setup.scorer.target_reached(&b.eval, z(b))) {
                let x = b.x.clone();
                let mut play = |batch: u64| Ok(games.records(it, &[(x.clone(), REVISIT)], batch as usize)?.remove(0));
                played += revisit::grow(b, &setup.scorer, s.confirm_games, &mut play)?;
            }
        }
        // The searched map of estimates takes every candidate by its evaluation.
        if let Some(explore) = &mut ck.explore {
            added = (0..cands.len()).filter(|&i| explore.insert(&cands[i].0, &evals[i], it)).count() as u64;
        }
        // 4. Move the search distributions.
        let from_dist: Vec<bool> = cands.iter().map(|c| c.1).collect();
        match &mut ck.search {
            Search::Cma(c) => {
                let mut order: Vec<usize> = (0..cands.len()).collect();
                order.sort_by(|&a, &b| {
                    let (ka, kb) = (evals[a].rank_key(), evals[b].rank_key());
                    from_dist[b].cmp(&from_dist[a]).then(kb.0.cmp(&ka.0)).then(kb.1.total_cmp(&ka.1)).then(a.cmp(&b))
                });
                let ranked: Vec<&[f64]> = order.iter().map(|&i| cands[i].0.as_slice()).collect();
                c.tell(&ranked);
            }
            Search::CmaMe { emitters, next, thresholds } => {
                // CMA-MAE: ranked by the improvement over the cells' thresholds, which then move.
                let mae = thresholds.as_mut().map(|t| {
                    let imp = mae::improvements(&ck.archive, t, cfg.qd.threshold_min, &evals);
                    let passed = mae::update(&ck.archive, t, cfg.qd.threshold_min, cfg.qd.learning_rate, &evals);
                    (imp, passed as u64)
                });
                if !first {
                    let k = *next % emitters.len();
                    let e = &mut emitters[k];
                    let mut order: Vec<usize> = (0..cands.len()).collect();
                    match &mae {
                        None => order.sort_by(|&a, &b| {
                            from_dist[b]
                                .cmp(&from_dist[a])
                                .then(st[b].0.partial_cmp(&st[a].0).unwrap_or(std::cmp::Ordering::Equal))
                                .then(st[b].1.total_cmp(&st[a].1))
                                .then(a.cmp(&b))
                        }),
                        Some((imp, _)) => order.sort_by(|&a, &b| {
                            from_dist[b]
                                .cmp(&from_dist[a])
                                .then(imp[b].0.cmp(&imp[a].0))
                                .then(imp[b].1.total_cmp(&imp[a].1))
                                .then(a.cmp(&b))
                        }),
                    }
                    if mae.as_ref().map_or(added, |m| m.1) == 0 {
                        // Nothing new: start this emitter over at a random elite next time.
                        e.mean = None;
                    } else {
                        let ranked: Vec<&[f64]> = order.iter().map(|&i| cands[i].0.as_slice()).collect();
                        e.tell(&ranked);
                    }
                    *next += 1;
                }
            }
            Search::MapElites => {}
        }
        // 5. History, checkpoint, progress.
        ck.games_played += played;
        ck.next_iteration = it + 1;
        ck.elapsed_s = elapsed0 + start.elapsed().as_secs_f64();
        let fs: Vec<f64> = evals.iter().map(|e| e.f).collect();
        ck.history.push(Row {
            iteration: it,
            candidates: cands.len() as u64,
            feasible: evals.iter().filter(|e| e.feasible).count() as u64,
            batch_best_f: fs.iter().cloned().fold(0.0, f64::max),
            batch_mean_f: fs.iter().sum::<f64>() / fs.len().max(1) as f64,
            best_f: ck.best.as_ref().map_or(0.0, |b| b.eval.f),
            qd_score: ck.archive.qd_score(),
            coverage: ck.archive.coverage(),
            elites: ck.archive.cells.len() as u64,
            confirmed: to_confirm.len() as u64,
            games: ck.games_played,
            elapsed_s: ck.elapsed_s,
        });
        // stop = "target": the best answer reaches every target with the confidence asked.
        let z = sequential::z(s.confirm_alpha, 1, ck.best.as_ref().map_or(0, |b| b.eval.games));
        let reached = s.stop == "target" && ck.best.as_ref().is_some_and(|b| setup.scorer.target_reached(&b.eval, z));
        ck.finished = reached || ck.games_played >= budget_games;
        crate::drive::save(ck_path, &*ck)?;
        write_history(dir, &ck.history)?;
        let msg = if cfg.is_map() {
            format!("iteration {it}: {} elites, QD-score {:.2}", ck.archive.cells.len(), ck.archive.qd_score())
        } else {
            let done = if reached { "; every target reached with confidence: stopping (stop = \"target\")" } else { "" };
            format!("iteration {it}: best F {:.4}{done}", ck.best.as_ref().map_or(0.0, |b| b.eval.f))
        };
        progress(ck.games_played.min(budget_games), budget_games, &msg);
        if let Some(b) = s.budget_minutes
            && !self.warned
            && ck.elapsed_s > b * 60.0
        {
            self.warned = true;
            progress(ck.games_played.min(budget_games), budget_games, &format!("past the config's budget of {b} minutes"));
        }
        Ok(crate::drive::Flow::Next)
    }
}
