//! The persona config (TOML): the game, the MCTS that plays it, the GP settings, the seeds, and
//! one `[[persona]]` table per persona — a measure (a game value, or the built-in `legal_moves`),
//! averaged over the moves or taken at the end, and a direction. Every error names
//! `file:line:column` and says what was expected.

use crate::config::{locate, show_number};
use crate::evolve::gp::GpConfig;
use crate::search::mcts::FinalChoice;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest size of a persona's `floor` and `range` ends (10^19): above every long a game
/// holds (9.2·10^18), and small enough that a range's width and the chart's axes stay finite.
pub const MAX_MEASURE: f64 = 1e19;

/// The whole file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaConfig {
    pub personas: Settings,
    /// Parameter overrides of the game (`"me.colours" = 6`).
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    #[serde(default)]
    pub gp: GpConfig,
    #[serde(rename = "persona")]
    pub list: Vec<Persona>,
    /// A game that runs in its own process (docs/bridge.md): `game` is then its source; each
    /// agent is the prefix-tree search of `iterations` whole episodes (its formula selecting),
    /// the random player the game's own default policy.
    #[serde(default)]
    pub external: Option<crate::bridge::config::External>,
}

/// `[personas]`: what every persona shares.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Output folder name: `outputs/<name>/seed-<seed>/`.
    pub name: String,
    /// The game (relative to the working directory).
    pub game: PathBuf,
    #[serde(default = "one")]
    pub seed: u64,
    /// Generations of GP (the paper: 100).
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub generations: u64,
    /// Games per individual and generation, on fresh seeds shared by every individual and the
    /// baselines (the paper: 50).
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub games: u64,
    /// MCTS iterations per move (the paper: 250); on an external game, whole episodes per
    /// prefix-tree search (`rollout_horizon` and `final_choice` do not apply there).
    #[serde(default = "iterations")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000_000>")]
    pub iterations: u64,
    /// Rollouts are `horizon − moves made` moves long (the paper: 20); 0 = play to the end.
    #[serde(default = "horizon")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000>")]
    pub rollout_horizon: u32,
    /// `binary` (a rollout wins when it beats the goal: the paper) or `continuous` (the measure
    /// scaled by the persona's `range`).
    #[serde(default = "binary")]
    pub reward: String,
    /// How the move to play is picked from the root's children: `formula` (the paper: the
    /// selection formula), `best_mean` or `most_visited`.
    #[serde(default = "formula")]
    pub final_choice: String,
    /// The vanilla baseline's UCB1 constant C in x̄ + C·√(ln n / n_j).
    #[serde(default = "sqrt2")]
    pub vanilla_c: f64,
    /// `oracle` or `fair`: overrides the game's `chance` line.
    pub chance: Option<String>,
    /// The game value reported as the score of every game (also for M personas).
    #[serde(default = "score")]
    pub score: String,
    /// Held-out seeds played by every persona's final best and the baselines after the run.
    #[serde(default = "held_out")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 0, 1_000_000>")]
    pub held_out: u64,
}

/// `[[persona]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Persona {
    pub name: String,
    /// A game value (`game.score`, `me.made`) or `legal_moves` (legal moves in the state).
    pub measure: String,
    /// `final` (the value when the game ends) or `mean` (the mean over the game's moves of the
    /// value before each move: the paper's "available moves").
    #[serde(default = "final_")]
    pub aggregate: String,
    /// `max` or `min`.
    pub direction: String,
    /// For `reward = "continuous"`: the measure's range, mapped onto [0, 1].
    pub range: Option<[f64; 2]>,
    /// A reference line on the chart (match-3's score floor 1200).
    pub floor: Option<f64>,
}

fn one() -> u64 {
    1
}
fn iterations() -> u64 {
    250
}
fn horizon() -> u32 {
    20
}
fn binary() -> String {
    "binary".into()
}
fn formula() -> String {
    "formula".into()
}
fn sqrt2() -> f64 {
    std::f64::consts::SQRT_2
}
fn score() -> String {
    "game.score".into()
}
fn held_out() -> u64 {
    50
}
fn final_() -> String {
    "final".into()
}

impl Persona {
    pub fn maximize(&self) -> bool {
        self.direction == "max"
    }
    pub fn mean(&self) -> bool {
        self.aggregate == "mean"
    }
}

impl Settings {
    pub fn final_choice(&self) -> FinalChoice {
        match self.final_choice.as_str() {
            "best_mean" => FinalChoice::BestMean,
            "most_visited" => FinalChoice::MostVisited,
            _ => FinalChoice::Formula,
        }
    }
    pub fn binary(&self) -> bool {
        self.reward == "binary"
    }
}

impl PersonaConfig {
    /// Reads, parses and checks a config.
    pub fn load(path: &Path) -> Result<(PersonaConfig, String)> {
        let text = crate::input::read_text(path)?;
        let mut cfg = Self::parse(path, &text)?;
        // Paths in a config are relative to the config file.
        cfg.personas.game = crate::config::resolve_path(path, &cfg.personas.game);
        if let Some(e) = &mut cfg.external {
            e.resolve(path, &cfg.personas.game);
        }
        Ok((cfg, text))
    }

    pub fn parse(path: &Path, text: &str) -> Result<PersonaConfig> {
        let cfg: PersonaConfig = crate::config::toml(&path.display().to_string(), text).map_err(|e| anyhow!(e))?;
        let at = |table: &str, nth: usize, key: &str| locate(path, text, table, nth, key);
        let s = &cfg.personas;
        if s.name.is_empty() || s.name.contains(['/', '\\']) || s.name.starts_with('.') {
            bail!("{}: name = \"{}\"; expected a folder name for outputs/<name>/", at("personas", 0, "name"), s.name);
        }
        if !matches!(s.reward.as_str(), "binary" | "continuous") {
            bail!("{}: reward = \"{}\"; expected \"binary\" or \"continuous\"", at("personas", 0, "reward"), s.reward);
        }
        if !matches!(s.final_choice.as_str(), "formula" | "best_mean" | "most_visited") {
            bail!(
                "{}: final_choice = \"{}\"; expected \"formula\", \"best_mean\" or \"most_visited\"",
                at("personas", 0, "final_choice"),
                s.final_choice
            );
        }
        if let Some(c) = &s.chance
            && c != "oracle"
            && c != "fair"
        {
            bail!("{}: chance = \"{c}\"; expected \"oracle\" or \"fair\"", at("personas", 0, "chance"));
        }
        if !(s.vanilla_c >= 0.0 && s.vanilla_c.is_finite()) {
            bail!("{}: vanilla_c = {}; expected a constant ≥ 0", at("personas", 0, "vanilla_c"), s.vanilla_c);
        }
        cfg.gp.validate().map_err(|e| anyhow!("{}: {e}", at("gp", 0, "")))?;
        if let Some(e) = &cfg.external {
            e.check(|k| at("external", 0, k))?;
            // The tree keeps raw outcomes: a persona's range maps them onto [0, 1].
            if s.reward != "continuous" {
                bail!(
                    "{}: reward = \"{}\" on an external game; expected \"continuous\" with each persona's `range` (the prefix tree maps an outcome's measure onto [0, 1])",
                    at("personas", 0, "reward"),
                    s.reward
                );
            }
            if s.chance.is_some() {
                bail!(
                    "{}: chance on an external game; expected none (the game draws its own chance from the episode's seed)",
                    at("personas", 0, "chance")
                );
            }
        }
        if cfg.list.is_empty() {
            bail!("{}: no [[persona]] table; expected at least one persona (name, measure, direction)", path.display());
        }
        for (k, p) in cfg.list.iter().enumerate() {
            if p.name.is_empty() || p.name.contains(['/', '\\']) || p.name.starts_with('.') {
                bail!("{}: name = \"{}\"; expected a folder name", at("persona", k, "name"), p.name);
            }
            if let Some(j) = cfg.list[..k].iter().position(|q| q.name == p.name) {
                bail!(
                    "{}: a second persona called \"{}\" (the first is number {}); expected distinct names",
                    at("persona", k, "name"),
                    p.name,
                    j + 1
                );
            }
            if !matches!(p.direction.as_str(), "max" | "min") {
                bail!("{}: direction = \"{}\"; expected \"max\" or \"min\"", at("persona", k, "direction"), p.direction);
            }
            if cfg.external.is_some() && p.aggregate != "final" {
                bail!(
                    "{}: aggregate = \"{}\" on an external game; expected \"final\" (a measure of the episode's outcome)",
                    at("persona", k, "aggregate"),
                    p.aggregate
                );
            }
            if !matches!(p.aggregate.as_str(), "final" | "mean") {
                bail!("{}: aggregate = \"{}\"; expected \"final\" or \"mean\"", at("persona", k, "aggregate"), p.aggregate);
            }
            if let Some(f) = p.floor
                && !(f.abs() <= MAX_MEASURE)
            {
                bail!(
                    "{}: floor = {}; expected a number from -{MAX_MEASURE:e} to {MAX_MEASURE:e}",
                    at("persona", k, "floor"),
                    show_number(f)
                );
            }
            match p.range {
                Some([lo, hi]) if !(lo < hi && lo.abs() <= MAX_MEASURE && hi.abs() <= MAX_MEASURE) => {
                    bail!(
                        "{}: range = [{}, {}]; expected [low, high] with low < high, both from -{MAX_MEASURE:e} to {MAX_MEASURE:e}",
                        at("persona", k, "range"),
                        show_number(lo),
                        show_number(hi)
                    )
                }
                None if s.reward == "continuous" => {
                    bail!(
                        "{}: persona \"{}\" has no range; expected `range = [low, high]` with reward = \"continuous\"",
                        at("persona", k, "name"),
                        p.name
                    )
                }
                _ => {}
            }
        }
        Ok(cfg)
    }
}
