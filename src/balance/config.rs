//! The balance config (`playforge balance configs/hexmage_balance.toml`): which game, which
//! declared parameters form each team's DNA, the fitness and its constants, the AI pairs that
//! play every evaluation, and the optimizer with its budget. Every key is defined once here
//! with its default (HexMage's constants, ../shared/spec/hexmage-encounters.md §4); unknown keys
//! are errors, and every check after parsing names the key and its line ([`locate`]).

use crate::players::AiConfig;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BalanceConfig {
    pub balance: Settings,
    /// The teams, in side order (the first is the game's first player).
    #[serde(rename = "team")]
    pub teams: Vec<TeamConfig>,
    /// Parameters held at a value for the whole run (not evolved), by name.
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// Narrower ranges for evolved parameters: `"red1.maxHp" = [20, 80]` (inside the declared range).
    #[serde(default)]
    pub ranges: BTreeMap<String, [f64; 2]>,
    /// Extra validity rules over parameter values, e.g. `"red1a.cost <= red1.maxAp"`.
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub fitness: FitnessConfig,
    pub evaluation: EvaluationConfig,
    #[serde(rename = "ai")]
    pub ais: Vec<AiConfig>,
    #[serde(default)]
    pub es: EsConfig,
    #[serde(default)]
    pub sa: SaConfig,
    #[serde(default)]
    pub cma: CmaConfig,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Outputs go to `<out>/<name>/<optimizer>-seed-<seed>/`.
    pub name: FolderName,
    pub game: PathBuf,
    #[serde(default = "one")]
    pub seed: u64,
    /// `es` (HexMage's evolution strategy), `sa` (simulated annealing, the baseline it replaced)
    /// or `cma` (separable CMA-ES with confirmation re-evaluations).
    #[serde(default = "es")]
    pub optimizer: String,
    /// The budget: fitness evaluations (one evaluation = `games` games per AI pair).
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000_000>")]
    pub max_evaluations: u64,
    /// Stop when the best confirmed F exceeds this (HexMage: 0.95).
    #[serde(default = "target")]
    pub target: f64,
    /// `grouped` (R R B B, HexMage) or `alternating`; default: the game's.
    #[serde(default)]
    pub turn_order: Option<String>,
    /// Games of the best encounter saved as replays (one per AI pair, cycling).
    #[serde(default = "four")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 0, 10_000>")]
    pub replays: u64,
    #[serde(default = "outputs")]
    pub out: PathBuf,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamConfig {
    pub name: String,
    /// Parameter names or patterns with `*` (`red*` = every parameter starting with `red`).
    pub params: Vec<String>,
    /// Hold this team at the game's values (or `[parameters]`): the player's own team.
    #[serde(default)]
    pub fixed: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitnessConfig {
    /// Weights of the terms; F = Σ wᵢ·termᵢ / Σ wᵢ. HexMage: balance, length, difference 1 each.
    #[serde(default = "w_one")]
    pub balance: f64,
    #[serde(default = "w_one")]
    pub length: f64,
    #[serde(default = "w_one")]
    pub difference: f64,
    /// Win balance 1 − |wins₁ − wins₂| / games; not in HexMage.
    #[serde(default)]
    pub wins: f64,
    /// Count only the part of |wins₁ − wins₂| / n beyond what a fair coin gives on average
    /// (√(2 / (π n))), so that a few games of an even encounter are not punished for chance.
    #[serde(default)]
    pub wins_noise_corrected: bool,
    /// Win balance per AI pair, averaged over the pairs (every pair's games must come out even)
    /// rather than over all games together.
    #[serde(default)]
    pub per_pair: bool,
    /// With `per_pair`, also the length term per pair, averaged; otherwise HexMage's L of the
    /// mean length over all games.
    #[serde(default)]
    pub length_per_pair: bool,
    /// The attribute holding an actor's health, and its maximum (an attribute or constant):
    /// H = Σ health / Σ maximum over every object of the turn class at the game's end.
    #[serde(default = "hp")]
    pub health: String,
    #[serde(default = "max_hp")]
    pub health_max: String,
    /// F when some actor never got a turn while alive or the game ended inside the first round
    /// (HexMage's AllPlayed rule); a negative value switches the rule off.
    #[serde(default = "penalty")]
    pub all_played_penalty: f64,
    /// L(len) = Φ(len; mean, sd) below `switch`, Φ(mirror − len; mean, sd_high) from it; len
    /// in turns (HexMage: 10, 3, 20, 40, 2).
    #[serde(default = "ten")]
    pub length_mean: f64,
    #[serde(default = "three")]
    pub length_sd: f64,
    #[serde(default = "twenty")]
    pub length_switch: f64,
    #[serde(default = "forty")]
    pub length_mirror: f64,
    #[serde(default = "two")]
    pub length_sd_high: f64,
    /// D(R) = 1 / (1 + exp(−steepness·R + offset)), R = ‖team₁ − team₂‖ / √genes per team.
    #[serde(default = "sixty")]
    pub difference_steepness: f64,
    #[serde(default = "one_five")]
    pub difference_offset: f64,
}

impl Default for FitnessConfig {
    fn default() -> Self {
        toml::from_str("").expect("every fitness key has a default")
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvaluationConfig {
    /// AI pairs by `[[ai]]` name, `[side 1, side 2]`; HexMage: Rule/Rule and MCTS/MCTS.
    pub pairs: Vec<[String; 2]>,
    /// Games per pair per evaluation (HexMage: 1).
    #[serde(default = "one")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub games: u64,
    /// Games per pair when a candidate is confirmed (re-evaluated on fresh seeds before it
    /// counts as the best so far).
    #[serde(default = "ten_u")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub confirm_games: u64,
    /// The same game seeds for every candidate of an iteration (common random numbers).
    #[serde(default = "yes")]
    pub common_random_numbers: bool,
    /// How the iteration's best is confirmed: `fixed` (`confirm_games` per pair on fresh seeds,
    /// the default) or `sequential` (doubling batches up to `confirm_games` per pair, only while
    /// its challenge of the best so far or the target is in doubt; [`super::sequential`]).
    #[serde(default = "fixed", skip_serializing_if = "is_fixed")]
    pub confirm: String,
    /// With `confirm = "sequential"`: the error rate of an acceptance (a candidate better than
    /// the best so far, the target reached), over all the looks.
    #[serde(default = "alpha", skip_serializing_if = "is_alpha")]
    pub confirm_alpha: f64,
}

fn fixed() -> String {
    "fixed".into()
}

fn is_fixed(s: &String) -> bool {
    s == "fixed"
}

fn alpha() -> f64 {
    0.05
}

fn is_alpha(a: &f64) -> bool {
    *a == 0.05
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EsConfig {
    /// Neighbours per iteration (λ).
    #[serde(default = "forty_u")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000>")]
    pub lambda: usize,
    /// `code` (factor 1 − δ or 1 + δ, HexMage's code) or `uniform` (U[1 − δ, 1 + δ], the thesis).
    #[serde(default = "code")]
    pub mutation: String,
    #[serde(default = "quarter")]
    pub delta: f64,
    /// Probability of mutating one more gene after each mutation.
    #[serde(default = "chain")]
    pub chain: f64,
    /// Genes are clamped to [clamp_min, 1] after a mutation.
    #[serde(default = "clamp_min")]
    pub clamp_min: f64,
    /// Re-randomize when the current point's F is below this.
    #[serde(default = "restart")]
    pub restart_below: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaConfig {
    /// Initial temperature; it falls linearly to 0 over the budget.
    #[serde(default = "half")]
    pub t0: f64,
    /// Neighbours per step; their fitness-weighted mean is the candidate (HexMage's code: 40;
    /// 1 = classic annealing).
    #[serde(default = "forty_u")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000>")]
    pub neighbours: usize,
    #[serde(default = "restart")]
    pub restart_below: f64,
}

macro_rules! consts {
    ($($name:ident : $t:ty = $v:expr;)*) => { $(fn $name() -> $t { $v })* };
}
consts! {
    one: u64 = 1; four: u64 = 4; ten_u: u64 = 10; forty_u: usize = 40;
    w_one: f64 = 1.0; ten: f64 = 10.0; three: f64 = 3.0; twenty: f64 = 20.0; forty: f64 = 40.0; two: f64 = 2.0;
    sixty: f64 = 60.0; one_five: f64 = 1.5; penalty: f64 = 0.0001; target: f64 = 0.95; quarter: f64 = 0.25;
    chain: f64 = 0.35; clamp_min: f64 = 0.01; restart: f64 = 0.1; half: f64 = 0.5;
    yes: bool = true;
}
fn es() -> String {
    "es".into()
}
fn code() -> String {
    "code".into()
}
fn hp() -> String {
    "hp".into()
}
fn max_hp() -> String {
    "maxHp".into()
}
fn outputs() -> PathBuf {
    PathBuf::from("outputs")
}

impl Default for EsConfig {
    fn default() -> Self {
        toml::from_str("").expect("every es key has a default")
    }
}
impl Default for SaConfig {
    fn default() -> Self {
        toml::from_str("").expect("every sa key has a default")
    }
}
pub use crate::config::{CmaConfig, FolderName, locate};

/// The optimizers `optimizer`, `--optimizer` and the Python API accept.
pub const OPTIMIZERS: crate::drive::Names = crate::drive::Names(&["es", "sa", "cma"]);

impl BalanceConfig {
    /// Reads, parses and checks a config (and returns its text); every error names the file,
    /// the line and the key. Paths in it are resolved against the config file.
    pub fn load(path: &Path) -> Result<(BalanceConfig, String)> {
        let text = crate::input::read_text(path)?;
        let mut cfg = Self::parse(path, &text)?;
        cfg.balance.game = crate::config::resolve_path(path, &cfg.balance.game);
        Ok((cfg, text))
    }

    pub fn parse(path: &Path, text: &str) -> Result<BalanceConfig> {
        let cfg: BalanceConfig = crate::config::toml(&path.display().to_string(), text).map_err(|e| anyhow!(e))?;
        let at = |table: &str, nth: usize, key: &str| locate(path, text, table, nth, key);
        let s = &cfg.balance;
        if !OPTIMIZERS.has(&s.optimizer) {
            bail!("{}: optimizer = \"{}\"; expected {OPTIMIZERS}", at("balance", 0, "optimizer"), s.optimizer);
        }
        if !(s.target > 0.0 && s.target < 1.0) {
            bail!("{}: target = {}; expected a fitness in (0, 1) (a run stops when F exceeds it)", at("balance", 0, "target"), s.target);
        }
        if let Some(o) = &s.turn_order
            && o != "grouped"
            && o != "alternating"
        {
            bail!("{}: turn_order = \"{o}\"; expected \"grouped\" or \"alternating\"", at("balance", 0, "turn_order"));
        }
        if cfg.teams.len() != 2 {
            bail!("{}: {} [[team]] tables; expected 2 (one per side)", path.display(), cfg.teams.len());
        }
        if cfg.teams[0].name == cfg.teams[1].name {
            bail!("{}: both teams are called \"{}\"; expected two names", at("team", 1, "name"), cfg.teams[1].name);
        }
        for (k, t) in cfg.teams.iter().enumerate() {
            if t.params.is_empty() {
                bail!("{}: params = []; expected at least one parameter name or pattern", at("team", k, "params"));
            }
        }
        if cfg.teams.iter().all(|t| t.fixed) {
            bail!("{}: both teams are fixed; expected at least one team to evolve", at("team", 1, "fixed"));
        }
        let f = &cfg.fitness;
        for (key, w) in [("balance", f.balance), ("length", f.length), ("difference", f.difference), ("wins", f.wins)] {
            if !(w >= 0.0) || !w.is_finite() {
                bail!("{}: {key} = {w}; expected a weight ≥ 0", at("fitness", 0, key));
            }
        }
        if f.balance + f.length + f.difference + f.wins <= 0.0 {
            bail!("{}: every weight is 0; expected at least one positive weight", at("fitness", 0, ""));
        }
        for (key, v) in [("length_sd", f.length_sd), ("length_sd_high", f.length_sd_high)] {
            if !(v > 0.0) {
                bail!("{}: {key} = {v}; expected a standard deviation > 0", at("fitness", 0, key));
            }
        }
        if f.length_switch > f.length_mirror {
            bail!(
                "{}: length_switch = {} is above length_mirror = {}; expected switch ≤ mirror (the range is reversed)",
                at("fitness", 0, "length_switch"),
                f.length_switch,
                f.length_mirror
            );
        }
        let e = &cfg.evaluation;
        if !matches!(e.confirm.as_str(), "fixed" | "sequential") {
            bail!("{}: confirm = {:?}; expected \"fixed\" or \"sequential\"", at("evaluation", 0, "confirm"), e.confirm);
        }
        if !(e.confirm_alpha > 0.0 && e.confirm_alpha < 0.5) {
            bail!("{}: confirm_alpha = {}; expected 0 < confirm_alpha < 0.5", at("evaluation", 0, "confirm_alpha"), e.confirm_alpha);
        }
        if e.pairs.is_empty() {
            bail!("{}: pairs = []; expected at least one pair of AI names", at("evaluation", 0, "pairs"));
        }
        for pair in &e.pairs {
            for name in pair {
                if !cfg.ais.iter().any(|a| &a.name == name) {
                    let known: Vec<&str> = cfg.ais.iter().map(|a| a.name.as_str()).collect();
                    bail!("{}: AI \"{name}\" is not an [[ai]]; expected one of: {}", at("evaluation", 0, "pairs"), known.join(", "));
                }
            }
        }
        let es = &cfg.es;
        if es.mutation != "code" && es.mutation != "uniform" {
            bail!("{}: mutation = \"{}\"; expected \"code\" or \"uniform\"", at("es", 0, "mutation"), es.mutation);
        }
        if !(es.delta > 0.0 && es.delta < 1.0) {
            bail!("{}: delta = {}; expected 0 < delta < 1", at("es", 0, "delta"), es.delta);
        }
        if !(es.chain >= 0.0 && es.chain < 1.0) {
            bail!("{}: chain = {}; expected a probability in [0, 1)", at("es", 0, "chain"), es.chain);
        }
        if !(es.clamp_min >= 0.0 && es.clamp_min < 1.0) {
            bail!("{}: clamp_min = {}; expected 0 ≤ clamp_min < 1", at("es", 0, "clamp_min"), es.clamp_min);
        }
        for (table, v) in [("es", cfg.es.restart_below), ("sa", cfg.sa.restart_below)] {
            if !(0.0..1.0).contains(&v) {
                bail!("{}: restart_below = {v}; expected a fitness in [0, 1)", at(table, 0, "restart_below"));
            }
        }
        let per_eval = e.games.checked_mul(e.pairs.len() as u64);
        if per_eval.and_then(|g| g.checked_mul(s.max_evaluations)).is_none_or(|g| g > 1 << 50) {
            bail!(
                "{}: max_evaluations × games × pairs is too large; expected a budget below 2^50 games",
                at("balance", 0, "max_evaluations")
            );
        }
        if !(f.length_mirror.is_finite() && f.length_mirror.abs() < 1e6 && f.length_switch.abs() < 1e6) {
            bail!("{}: length_mirror = {}; expected a number of turns below 1 000 000", at("fitness", 0, "length_mirror"), f.length_mirror);
        }
        if !(cfg.sa.t0 > 0.0) {
            bail!("{}: t0 = {}; expected a temperature > 0", at("sa", 0, "t0"), cfg.sa.t0);
        }
        cfg.cma.check(&|k| at("cma", 0, k)).map_err(|e| anyhow!(e))?;
        Ok(cfg)
    }
}
