//! The generate config (`playforge generate configs/<name>.toml`): which game and which of its
//! declared parameters are the genes, who plays (`[[player]]`: an `[[ai]]`, a persona, random,
//! each with its play-style overlays), what is measured (`[[measure]]`), what the designer asks
//! for (`[[target]]`: a band, a direction, a relation between measures, weighted), what content
//! must satisfy to count at all (`[feasible]`, `[[require]]`, parameter `constraints`), and for a
//! map of answers the behaviour descriptors (`[[descriptor]]`) and the quality-diversity
//! settings (`[qd]`). Every key is defined once here with its default; unknown keys are errors,
//! and every check after parsing names the key and its line ([`locate`]) and lists what is allowed.

use super::expr::Expr;
use crate::players::AiConfig;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest `budget_minutes` (10 000 000 minutes, 19 years): far past any run, and within
/// what a `Duration` holds (a larger number, up to 1e308, would overflow it).
pub const MAX_BUDGET_MINUTES: f64 = 10_000_000.0;

pub use crate::config::{FolderName, locate};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerateConfig {
    pub generate: Settings,
    /// Parameters held at a value for the whole run (not evolved), by name.
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    /// Narrower ranges for evolved parameters (inside the declared range).
    #[serde(default)]
    pub ranges: BTreeMap<String, [f64; 2]>,
    /// Validity rules over parameter values, e.g. `"me.weight1 + me.weight2 >= 1"`.
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(rename = "player")]
    pub players: Vec<PlayerConfig>,
    /// AIs the players name (`kind = "ai"`), as in the balance and tournament configs.
    #[serde(default, rename = "ai")]
    pub ais: Vec<AiConfig>,
    #[serde(rename = "measure")]
    pub measures: Vec<MeasureConfig>,
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetConfig>,
    #[serde(default, rename = "require")]
    pub requires: Vec<RequireConfig>,
    #[serde(default)]
    pub feasible: Feasible,
    #[serde(default, rename = "descriptor")]
    pub descriptors: Vec<DescriptorConfig>,
    #[serde(default)]
    pub qd: QdConfig,
    #[serde(default)]
    pub cma: crate::config::CmaConfig,
    /// A game that runs in its own process (docs/bridge.md): `game` is then its source (what a
    /// checkpoint belongs to), the genes its declared parameters, the measures its outcome's.
    #[serde(default)]
    pub external: Option<crate::bridge::config::External>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Outputs go to `<out>/<name>/<algorithm>-seed-<seed>/`.
    pub name: FolderName,
    pub game: PathBuf,
    #[serde(default = "one")]
    pub seed: u64,
    /// `cma` (one answer: separable CMA-ES), `map-elites`, `cma-me` or `cma-mae` (a map of answers over the
    /// `[[descriptor]]`s).
    #[serde(default = "cma")]
    pub algorithm: String,
    /// The genes: declared parameters by name or pattern with `*`.
    pub params: Vec<String>,
    /// The budget in candidate evaluations (each: `games` games at every table).
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000_000>")]
    pub max_evaluations: u64,
    /// Games per table (a seating of players) per evaluation.
    #[serde(default = "four")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub games: u64,
    /// Games per table when a candidate is confirmed on fresh seeds (before it counts as the
    /// best, or enters the map).
    #[serde(default = "twenty")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub confirm_games: u64,
    /// How a candidate is confirmed: `fixed` (`confirm_games` games per table on fresh seeds,
    /// the first algorithm) or `sequential` (the games it was screened on, then fresh games in
    /// doubling batches up to `confirm_games` per table, only while a requirement or its
    /// challenge of the incumbent is in doubt; `generate::sequential`).
    #[serde(default = "fixed", skip_serializing_if = "is_fixed")]
    pub confirm: String,
    /// `sequential`: the chance of a wrong verdict on each question over all its looks.
    #[serde(default = "alpha", skip_serializing_if = "is_alpha")]
    pub confirm_alpha: f64,
    /// When a `cma` run ends: `budget` (the default: when its games are spent) or `target` (as
    /// soon as its best answer reaches every target with confidence: each target's interval of
    /// z standard errors, at `confirm_alpha`, scores 1 from end to end).
    #[serde(default = "budget", skip_serializing_if = "is_budget")]
    pub stop: String,
    /// The same game seeds for every candidate of an iteration (common random numbers).
    #[serde(default = "yes")]
    pub common_random_numbers: bool,
    /// Moves after which a game counts as not ending (a guard against endless games).
    #[serde(default = "max_moves")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000_000>")]
    pub max_moves: u64,
    /// The wall-clock budget the config promises on a 2-core machine, in minutes: the run warns
    /// when it is past it (it never stops on the clock, which would make runs unrepeatable).
    #[serde(default)]
    pub budget_minutes: Option<f64>,
    /// Games per table that `verify` plays on fresh seeds.
    #[serde(default = "hundred")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub verify_games: u64,
    /// `grouped` or `alternating`; default: the game's.
    #[serde(default)]
    pub turn_order: Option<String>,
    #[serde(default = "outputs")]
    pub out: PathBuf,
}

/// `[[player]]`: who plays a seat.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerConfig {
    pub name: String,
    /// `ai` (an `[[ai]]` table by `ai = "<name>"`), `persona` (MCTS with a selection formula
    /// that maximizes or minimizes a measure) or `random`. On an external game: `game` (the
    /// game's own default policy) or `persona` (the prefix-tree search of `iterations`
    /// rollouts, its formula selecting, keeping the best).
    pub kind: String,
    #[serde(default)]
    pub ai: Option<String>,
    /// Play-style overlays of the game file switched on in this player's games; on an external
    /// game, at most one play style and one design variant it declares.
    #[serde(default)]
    pub overlays: Vec<String>,
    /// persona: the selection formula (a name such as `ucb1`, or a formula's text).
    #[serde(default)]
    pub formula: Option<String>,
    /// persona: the formula from a file (a persona's `best_formula.txt`: its first line that is
    /// not a `#` comment), relative to the config.
    #[serde(default)]
    pub formula_file: Option<PathBuf>,
    /// persona: what it plays for: a game value (`game.score`) or `legal_moves`.
    #[serde(default = "score")]
    pub measure: String,
    /// persona: `final` (the value at the end) or `mean` (over the moves).
    #[serde(default = "final_")]
    pub aggregate: String,
    /// persona: `max` or `min`.
    #[serde(default = "max")]
    pub direction: String,
    /// persona: the measure's range mapped onto the reward [0, 1] (continuous reward).
    #[serde(default)]
    pub scale: Option<[f64; 2]>,
    /// persona: a rollout wins (reward 1) when its measure beats this (binary reward), instead
    /// of `scale`.
    #[serde(default)]
    pub goal: Option<f64>,
    /// persona: MCTS iterations per move.
    #[serde(default = "hundred")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000_000>")]
    pub iterations: u64,
    /// persona: rollouts end `rollout_horizon − moves made` moves on (the persona paper's 20);
    /// 0 = at the end of the game.
    #[serde(default)]
    pub rollout_horizon: u32,
    /// persona: which root child is played (default `formula`, the paper's).
    #[serde(default)]
    pub final_choice: Option<crate::search::mcts::FinalChoice>,
    /// persona: C of the named formulas (default √2).
    #[serde(default)]
    pub c: Option<f64>,
}

/// `[[measure]]`: a number per game, averaged over a table's games.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureConfig {
    /// The name targets, requirements and descriptors use.
    pub name: String,
    /// The table: one player per seat of the game, in seat order.
    pub players: Vec<String>,
    /// A game value (`game.score`, `me.made`), or `legal_moves`, `length` (moves), `turns`,
    /// `goals` (goals reached), `goal_move` (the move that reached the first goal; the game's
    /// length if none), `win` (1 when `side` won, ½ a draw, else 0), `draw`, `ended`.
    pub of: String,
    /// `final` (at the end of the game) or `mean` (before each move, averaged): values and
    /// `legal_moves` only.
    #[serde(default = "final_")]
    pub aggregate: String,
    /// The seat whose win `win` counts (0 = the first).
    #[serde(default)]
    pub side: u8,
    /// `<game value> <op> <number>` (`global.level >= 5`): the measure is `of` (a game value,
    /// `length` or `turns`) at the first state where this holds, or at the end when it never
    /// does — "the session in which the player reached level 5".
    #[serde(default)]
    pub when: Option<String>,
}

/// `[[target]]`: what the designer asks of a measure expression.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetConfig {
    /// Measures combined with numbers, `+ - * /` and parentheses (`maxs - mins`).
    pub expr: String,
    /// A band: at least / at most (either or both).
    #[serde(default)]
    pub at_least: Option<f64>,
    #[serde(default)]
    pub at_most: Option<f64>,
    /// How far outside the band the target's score halves (default: a quarter of the largest
    /// bound's size, at least 1).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// A direction instead of a band: `max` or `min`, over `scale`.
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub scale: Option<[f64; 2]>,
    #[serde(default = "w_one")]
    pub weight: f64,
    /// A band scored at its 95% interval's far edge rather than at the estimate: 1 only when
    /// the whole interval lies in the band, so that a noisy estimate near an edge scores below
    /// a sure one (what verification on fresh seeds rewards).
    #[serde(default)]
    pub certain: bool,
}

/// `[[require]]`: a hard bound; content outside it is infeasible (never the answer, never in
/// the map), not merely worse.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequireConfig {
    pub expr: String,
    #[serde(default)]
    pub at_least: Option<f64>,
    #[serde(default)]
    pub at_most: Option<f64>,
    /// Hold only when the expression's whole 95% interval lies within the bounds (during the
    /// search; `verify` checks the estimate): content that merely looks feasible on its games
    /// stays out.
    #[serde(default)]
    pub certain: bool,
}

/// `[feasible]`: what every game of a candidate must do.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feasible {
    /// Every game ends by its own rules (not a step or turn limit, not `max_moves`).
    #[serde(default = "yes")]
    pub ends: bool,
    /// No game ends with nobody able to move (`Stuck`).
    #[serde(default = "yes")]
    pub not_stuck: bool,
}

impl Default for Feasible {
    fn default() -> Self {
        toml::from_str("").expect("every feasible key has a default")
    }
}

/// `[[descriptor]]`: one axis of the map.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescriptorConfig {
    pub expr: String,
    pub min: f64,
    pub max: f64,
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000>")]
    pub bins: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QdConfig {
    /// Random candidates evaluated before the map's search starts.
    #[serde(default = "twenty_u")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub initial: usize,
    /// map-elites: candidates per iteration (mutants of elites drawn uniformly).
    #[serde(default = "eight")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub batch: usize,
    /// map-elites: the Gaussian mutation's σ in gene units.
    #[serde(default = "tenth")]
    pub sigma: f64,
    /// cma-me, cma-mae: improvement emitters (each a CMA-ES), taking turns one per iteration.
    #[serde(default = "two_u")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000>")]
    pub emitters: usize,
    /// What the search reads: `confirmed` (the map of confirmed elites: parents, emitters'
    /// restarts and rankings) or `estimates` (a second map that keeps every candidate by its
    /// evaluation's estimates, as pyribs's archive does, and ranks infeasible candidates by how
    /// far they are from feasible; the result map still takes confirmed elites only).
    #[serde(default = "confirmed", skip_serializing_if = "is_confirmed")]
    pub search_on: String,
    /// cma-mae: the archive's learning rate α (how fast a cell's threshold follows the
    /// qualities that pass it; 1 is CMA-ME's hard threshold).
    #[serde(default = "mae_rate", skip_serializing_if = "is_mae_rate")]
    pub learning_rate: f64,
    /// cma-mae: a cell's threshold before anything passed it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threshold_min: f64,
    /// With `confirm = "sequential"`: the elites per iteration that play `games` more per table
    /// on fresh seeds, those with the fewest games first while they hold fewer than
    /// `confirm_games` ([`super::revisit`]); 0, the default, revisits none.
    #[serde(default, skip_serializing_if = "is_zero_u")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 0, 1_000_000>")]
    pub revisit: usize,
}

fn is_zero_u(a: &usize) -> bool {
    *a == 0
}

fn mae_rate() -> f64 {
    0.01
}

fn is_mae_rate(a: &f64) -> bool {
    *a == 0.01
}

fn is_zero(a: &f64) -> bool {
    *a == 0.0
}

fn fixed() -> String {
    "fixed".into()
}

fn is_fixed(s: &String) -> bool {
    s == "fixed"
}

fn budget() -> String {
    "budget".into()
}

fn is_budget(s: &String) -> bool {
    s == "budget"
}

fn alpha() -> f64 {
    0.05
}

fn is_alpha(a: &f64) -> bool {
    *a == 0.05
}

fn confirmed() -> String {
    "confirmed".into()
}

fn is_confirmed(s: &String) -> bool {
    s == "confirmed"
}

impl Default for QdConfig {
    fn default() -> Self {
        toml::from_str("").expect("every qd key has a default")
    }
}

macro_rules! consts {
    ($($name:ident : $t:ty = $v:expr;)*) => { $(fn $name() -> $t { $v })* };
}
consts! {
    one: u64 = 1; four: u64 = 4; twenty: u64 = 20; hundred: u64 = 100; max_moves: u64 = 10_000;
    twenty_u: usize = 20; eight: usize = 8; two_u: usize = 2;
    w_one: f64 = 1.0; tenth: f64 = 0.1; yes: bool = true;
}
fn cma() -> String {
    "cma".into()
}
fn score() -> String {
    "game.score".into()
}
fn final_() -> String {
    "final".into()
}
fn max() -> String {
    "max".into()
}
fn outputs() -> PathBuf {
    PathBuf::from("outputs")
}

/// The algorithms, as the config and `--algorithm` name them.
pub const ALGORITHMS: crate::drive::Names = crate::drive::Names(&["cma", "map-elites", "cma-me", "cma-mae"]);

/// Names of the measures that are not game values.
pub const BUILTIN_MEASURES: &[&str] = &["legal_moves", "length", "turns", "goals", "goal_move", "win", "draw", "ended"];

impl GenerateConfig {
    /// Reads, parses and checks a config (and returns its text); paths in it are resolved
    /// against the config file.
    pub fn load(path: &Path) -> Result<(GenerateConfig, String)> {
        let text = crate::input::read_text(path)?;
        let mut cfg = Self::parse(path, &text)?;
        cfg.generate.game = crate::config::resolve_path(path, &cfg.generate.game);
        if let Some(e) = &mut cfg.external {
            e.resolve(path, &cfg.generate.game);
        }
        for p in &mut cfg.players {
            if let Some(f) = &p.formula_file {
                p.formula_file = Some(crate::config::resolve_path(path, f));
            }
        }
        Ok((cfg, text))
    }

    /// Whether the run makes a map (MAP-Elites or CMA-ME) rather than one answer.
    pub fn is_map(&self) -> bool {
        self.generate.algorithm != "cma"
    }

    pub fn parse(path: &Path, text: &str) -> Result<GenerateConfig> {
        let cfg: GenerateConfig = crate::config::toml(&path.display().to_string(), text).map_err(|e| anyhow!(e))?;
        let at = |table: &str, nth: usize, key: &str| locate(path, text, table, nth, key);
        let s = &cfg.generate;
        if !ALGORITHMS.has(&s.algorithm) {
            bail!("{}: algorithm = \"{}\"; expected {ALGORITHMS}", at("generate", 0, "algorithm"), s.algorithm);
        }
        if s.params.is_empty() {
            bail!("{}: params = []; expected at least one parameter name or pattern (`me.weight*`)", at("generate", 0, "params"));
        }
        if let Some(o) = &s.turn_order
            && o != "grouped"
            && o != "alternating"
        {
            bail!("{}: turn_order = \"{o}\"; expected \"grouped\" or \"alternating\"", at("generate", 0, "turn_order"));
        }
        if let Some(b) = s.budget_minutes
            && !(b > 0.0 && b <= MAX_BUDGET_MINUTES)
        {
            bail!(
                "{}: budget_minutes = {}; expected a number of minutes > 0 and at most {MAX_BUDGET_MINUTES} (19 years)",
                at("generate", 0, "budget_minutes"),
                crate::config::show_number(b)
            );
        }
        if let Some(e) = &cfg.external {
            e.check(|k| at("external", 0, k))?;
        }
        let external = cfg.external.is_some();
        // Players: unique names, known kinds, their keys.
        let player_names: Vec<&str> = cfg.players.iter().map(|p| p.name.as_str()).collect();
        if cfg.players.is_empty() {
            bail!("{}: no [[player]]; expected at least one player (an AI, a persona or random)", path.display());
        }
        for (k, p) in cfg.players.iter().enumerate() {
            if player_names[..k].contains(&p.name.as_str()) {
                bail!("{}: two players are called \"{}\"; expected unique names", at("player", k, "name"), p.name);
            }
            match p.kind.as_str() {
                "ai" => {
                    let Some(name) = &p.ai else {
                        bail!("{}: kind = \"ai\" needs `ai = \"<name of an [[ai]] table>\"`", at("player", k, "kind"));
                    };
                    if !cfg.ais.iter().any(|a| &a.name == name) {
                        let known: Vec<&str> = cfg.ais.iter().map(|a| a.name.as_str()).collect();
                        bail!(
                            "{}: ai = \"{name}\" is not an [[ai]]; expected one of: {}",
                            at("player", k, "ai"),
                            if known.is_empty() { "(no [[ai]] tables)".to_string() } else { known.join(", ") }
                        );
                    }
                }
                "persona" => {
                    if p.formula.is_some() && p.formula_file.is_some() {
                        bail!("{}: both `formula` and `formula_file`; expected one of them", at("player", k, "formula_file"));
                    }
                    if p.direction != "max" && p.direction != "min" {
                        bail!("{}: direction = \"{}\"; expected \"max\" or \"min\"", at("player", k, "direction"), p.direction);
                    }
                    if p.aggregate != "final" && p.aggregate != "mean" {
                        bail!("{}: aggregate = \"{}\"; expected \"final\" or \"mean\"", at("player", k, "aggregate"), p.aggregate);
                    }
                    match (p.scale, p.goal) {
                        (Some(_), Some(_)) => bail!("{}: both `scale` and `goal`; expected one of them", at("player", k, "goal")),
                        (None, None) => bail!(
                            "{}: a persona needs its reward: `scale = [lo, hi]` (the measure mapped onto [0, 1]) or `goal = <number>` (a rollout wins when it beats it)",
                            at("player", k, "name")
                        ),
                        (Some([lo, hi]), None) if !(lo < hi) => {
                            bail!("{}: scale = [{lo}, {hi}]; expected [low, high] with low < high", at("player", k, "scale"))
                        }
                        _ => {}
                    }
                }
                "random" | "game" => {}
                other => bail!(
                    "{}: kind = \"{other}\"; expected {}",
                    at("player", k, "kind"),
                    if external { "\"game\" or \"persona\"" } else { "\"ai\", \"persona\" or \"random\"" }
                ),
            }
            let fits = match p.kind.as_str() {
                "game" => external,
                "ai" | "random" => !external,
                _ => true,
            };
            if !fits {
                bail!(
                    "{}: kind = \"{}\" {}",
                    at("player", k, "kind"),
                    p.kind,
                    if external {
                        "on an external game; expected \"game\" (its own default policy) or \"persona\" (the prefix-tree search)"
                    } else {
                        "is for an external game ([external]); expected \"ai\", \"persona\" or \"random\""
                    }
                );
            }
            if p.kind != "ai" && p.ai.is_some() {
                bail!("{}: `ai` is for kind = \"ai\"; this player is kind = \"{}\"", at("player", k, "ai"), p.kind);
            }
        }
        // Measures: unique names that are not reserved, tables of known players.
        let mut names: Vec<&str> = Vec::new();
        if cfg.measures.is_empty() {
            bail!("{}: no [[measure]]; expected at least one (what the targets and the map read)", path.display());
        }
        for (k, m) in cfg.measures.iter().enumerate() {
            let ok_name = !m.name.is_empty()
                && m.name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && m.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok_name {
                bail!(
                    "{}: name = \"{}\"; expected a name of letters, digits and _ (it is used in expressions)",
                    at("measure", k, "name"),
                    m.name
                );
            }
            if names.contains(&m.name.as_str()) {
                bail!("{}: two measures are called \"{}\"; expected unique names", at("measure", k, "name"), m.name);
            }
            names.push(&m.name);
            if m.players.is_empty() {
                bail!("{}: players = []; expected one player per seat of the game", at("measure", k, "players"));
            }
            for pl in &m.players {
                if !player_names.contains(&pl.as_str()) {
                    bail!(
                        "{}: player \"{pl}\" is not a [[player]]; expected one of: {}",
                        at("measure", k, "players"),
                        player_names.join(", ")
                    );
                }
            }
            if m.aggregate != "final" && m.aggregate != "mean" {
                bail!("{}: aggregate = \"{}\"; expected \"final\" or \"mean\"", at("measure", k, "aggregate"), m.aggregate);
            }
            let builtin = BUILTIN_MEASURES.contains(&m.of.as_str());
            if m.aggregate == "mean" && builtin && m.of != "legal_moves" {
                bail!(
                    "{}: of = \"{}\" with aggregate = \"mean\"; expected \"mean\" only for game values and legal_moves",
                    at("measure", k, "aggregate"),
                    m.of
                );
            }
            if let Some(w) = &m.when {
                super::expr::parse_when(w).map_err(|why| anyhow!("{}: when = \"{w}\": {why}", at("measure", k, "when")))?;
                if m.aggregate != "final" || (builtin && m.of != "length" && m.of != "turns") {
                    bail!(
                        "{}: of = \"{}\", aggregate = \"{}\" with `when`; expected a game value, `length` or `turns`, read once (aggregate \"final\")",
                        at("measure", k, "when"),
                        m.of,
                        m.aggregate
                    );
                }
            }
            // An external game's measures are names in its hello (checked against it).
            if !builtin && !m.of.contains('.') && !external {
                bail!(
                    "{}: of = \"{}\"; expected a game value (`game.score`, `object.attribute`) or one of: {}",
                    at("measure", k, "of"),
                    m.of,
                    BUILTIN_MEASURES.join(", ")
                );
            }
        }
        let expr = |e: &str, table: &str, nth: usize| -> Result<Expr> {
            Expr::parse(e, &names).map_err(|why| {
                let shown = super::expr::window(e, why.at.unwrap_or(0));
                anyhow!("{}: expr = \"{shown}\": {why}", expr_at(text, &at(table, nth, "expr"), e, why.at))
            })
        };
        let band = |lo: Option<f64>, hi: Option<f64>, table: &str, nth: usize| -> Result<()> {
            for (key, v) in [("at_least", lo), ("at_most", hi)] {
                if v.is_some_and(|v| !v.is_finite()) {
                    bail!("{}: {key} is not a finite number", at(table, nth, key));
                }
            }
            if let (Some(a), Some(b)) = (lo, hi)
                && a > b
            {
                bail!("{}: at_least = {a} is above at_most = {b}; expected an empty-free band", at(table, nth, "at_most"));
            }
            Ok(())
        };
        for (k, t) in cfg.targets.iter().enumerate() {
            expr(&t.expr, "target", k)?;
            band(t.at_least, t.at_most, "target", k)?;
            let has_band = t.at_least.is_some() || t.at_most.is_some();
            match (&t.direction, has_band) {
                (Some(_), true) => bail!("{}: a direction and a band; expected one of them", at("target", k, "direction")),
                (None, false) => bail!(
                    "{}: no band and no direction; expected `at_least`/`at_most`, or `direction = \"max\"`/`\"min\"` with `scale`",
                    at("target", k, "expr")
                ),
                (Some(d), false) => {
                    if d != "max" && d != "min" {
                        bail!("{}: direction = \"{d}\"; expected \"max\" or \"min\"", at("target", k, "direction"));
                    }
                    match t.scale {
                        Some([lo, hi]) if lo < hi => {}
                        Some([lo, hi]) => bail!("{}: scale = [{lo}, {hi}]; expected [low, high] with low < high", at("target", k, "scale")),
                        None => {
                            bail!("{}: direction = \"{d}\" needs `scale = [low, high]` (mapped onto [0, 1])", at("target", k, "direction"))
                        }
                    }
                }
                (None, true) => {}
            }
            if t.tolerance.is_some_and(|x| !(x > 0.0 && x.is_finite())) {
                bail!("{}: tolerance must be > 0", at("target", k, "tolerance"));
            }
            if t.certain && t.direction.is_some() {
                bail!("{}: `certain` is for bands; this target has a direction", at("target", k, "certain"));
            }
            if !(t.weight > 0.0 && t.weight.is_finite()) {
                bail!("{}: weight = {}; expected a weight > 0", at("target", k, "weight"), t.weight);
            }
        }
        for (k, r) in cfg.requires.iter().enumerate() {
            expr(&r.expr, "require", k)?;
            band(r.at_least, r.at_most, "require", k)?;
            if r.at_least.is_none() && r.at_most.is_none() {
                bail!("{}: no bound; expected `at_least` and/or `at_most`", at("require", k, "expr"));
            }
        }
        if cfg.targets.is_empty() && !cfg.is_map() {
            bail!(
                "{}: no [[target]]; expected at least one target for algorithm = \"cma\" (a map may have none: every feasible candidate then has quality 1)",
                path.display()
            );
        }
        if cfg.is_map() {
            if cfg.descriptors.is_empty() || cfg.descriptors.len() > 2 {
                bail!(
                    "{}: {} [[descriptor]] tables; algorithm = \"{}\" expected 1 or 2 (the map's axes)",
                    at("generate", 0, "algorithm"),
                    cfg.descriptors.len(),
                    s.algorithm
                );
            }
        } else if !cfg.descriptors.is_empty() {
            bail!(
                "{}: [[descriptor]] tables need a map; expected algorithm = \"map-elites\", \"cma-me\" or \"cma-mae\"",
                at("descriptor", 0, "expr")
            );
        }
        for (k, d) in cfg.descriptors.iter().enumerate() {
            expr(&d.expr, "descriptor", k)?;
            if !(d.min < d.max && d.min.is_finite() && d.max.is_finite()) {
                bail!("{}: min = {}, max = {}; expected min < max", at("descriptor", k, "max"), d.min, d.max);
            }
        }
        if !matches!(s.confirm.as_str(), "fixed" | "sequential") {
            bail!("{}: confirm = {:?}; expected \"fixed\" or \"sequential\"", at("generate", 0, "confirm"), s.confirm);
        }
        match s.stop.as_str() {
            "budget" => {}
            "target" if !cfg.is_map() && !cfg.targets.is_empty() => {}
            "target" => bail!(
                "{}: stop = \"target\"; expected a `cma` run with at least one [[target]] (a map has no single answer to stop at)",
                at("generate", 0, "stop")
            ),
            other => bail!("{}: stop = {other:?}; expected \"budget\" or \"target\"", at("generate", 0, "stop")),
        }
        if !(s.confirm_alpha > 0.0 && s.confirm_alpha < 0.5) {
            bail!("{}: confirm_alpha = {}; expected 0 < confirm_alpha < 0.5", at("generate", 0, "confirm_alpha"), s.confirm_alpha);
        }
        if !matches!(cfg.qd.search_on.as_str(), "confirmed" | "estimates") {
            bail!("{}: search_on = {:?}; expected \"confirmed\" or \"estimates\"", at("qd", 0, "search_on"), cfg.qd.search_on);
        }
        if !(cfg.qd.learning_rate > 0.0 && cfg.qd.learning_rate <= 1.0) {
            bail!("{}: learning_rate = {}; expected 0 < learning_rate ≤ 1", at("qd", 0, "learning_rate"), cfg.qd.learning_rate);
        }
        if !cfg.qd.threshold_min.is_finite() {
            bail!("{}: threshold_min = {}; expected a number", at("qd", 0, "threshold_min"), cfg.qd.threshold_min);
        }
        if cfg.qd.revisit > 0 && !(cfg.is_map() && s.confirm == "sequential") {
            bail!(
                "{}: revisit = {}; expected 0 unless the run is a map (map-elites, cma-me, cma-mae) confirmed sequentially (confirm = \"sequential\"), whose elites pool their games",
                at("qd", 0, "revisit"),
                cfg.qd.revisit
            );
        }
        if !(cfg.qd.sigma > 0.0 && cfg.qd.sigma <= 1.0) {
            bail!("{}: sigma = {}; expected 0 < sigma ≤ 1", at("qd", 0, "sigma"), cfg.qd.sigma);
        }
        cfg.cma.check(&|k| at("cma", 0, k)).map_err(|e| anyhow!(e))?;
        Ok(cfg)
    }
}

/// `file:line:column` of byte `at` of expression `e`, whose key `loc` ([`locate`]) found: the
/// column of the character itself when the expression is written on the key's line as a string
/// without escapes (as configs write them), else the key's own column.
fn expr_at(text: &str, loc: &str, e: &str, at: Option<usize>) -> String {
    let mut parts = loc.rsplitn(3, ':');
    let (Some(_), Some(line), Some(file), Some(at)) = (parts.next(), parts.next(), parts.next(), at) else {
        return loc.to_string();
    };
    let Some(l) = line.parse::<usize>().ok().and_then(|n| text.lines().nth(n.wrapping_sub(1))) else {
        return loc.to_string();
    };
    let value = l.find('=').and_then(|eq| l[eq..].find(['"', '\'']).map(|q| eq + q + 1));
    match value {
        Some(v) if l[v..].starts_with(e) && e.is_char_boundary(at.min(e.len())) => {
            format!("{file}:{line}:{}", l[..v + at.min(e.len())].chars().count() + 1)
        }
        _ => loc.to_string(),
    }
}
