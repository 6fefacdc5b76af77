//! Play configurations: one TOML file describes one search on one game — the game, the player
//! profile, the result formula, and the searcher with its enhancements. Experiments (`[[condition]]`
//! lists) are a base play config plus overrides merged into it.
//!
//! Every key is defined once here, with its doc and default; unknown keys are errors
//! (`deny_unknown_fields`) and errors name the file, line and column (from the toml crate).

use crate::search::formula::Formula;
use crate::search::mcts::{Budget, MctsConfig};
use crate::search::run::{Algorithm, PlanConfig, formula_by_name_or_text};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlayConfig {
    pub experiment: ExperimentSection,
    #[serde(default)]
    pub profile: Profile,
    pub result: ResultFormula,
    #[serde(default)]
    pub search: SearchSection,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSection {
    /// Name of the experiment; outputs go to `<out>/<name>/seed-<seed>/`.
    pub name: crate::config::FolderName,
    /// The game description, relative to the working directory.
    pub game: PathBuf,
    /// Master seed of every random stream.
    #[serde(default = "one")]
    pub seed: u64,
    /// Output folder.
    #[serde(default = "outputs")]
    pub out: PathBuf,
}

fn one() -> u64 {
    1
}
fn outputs() -> PathBuf {
    PathBuf::from("outputs")
}

/// The player profile: how the simulated player plays over time. Each field overrides the
/// game's own declaration when given.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Number of sessions: the game's goals become "session k finished" for k = 1..sessions.
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 10_000>")]
    pub sessions: Option<u32>,
    /// Session length in seconds (overrides `session length`).
    pub session_length: Option<i64>,
    /// Pause between sessions in seconds (overrides `session pause`).
    pub pause: Option<i64>,
    /// Goals replacing the game's `goal` lines, in order, as WGDL conditions — e.g.
    /// `["global.level >= long 5"]` asks "how long until level 5?".
    pub goals: Option<Vec<String>>,
}

/// The thesis's result formula: Σ wᵢ · normᵢ(vᵢ), each term clamped to [0, 1].
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ResultFormula {
    pub terms: Vec<Term>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    /// A game value: `global.coins`, `game.missionsDone`, `game.missions.done.sum`, `game.time`.
    pub value: String,
    pub weight: f64,
    #[serde(default)]
    pub min: f64,
    pub max: f64,
    /// `bigger` (default) or `smaller` is better.
    #[serde(default)]
    pub better: Better,
    /// How the value can move during play, for forfeiting's optimistic bound: `up` (only grows,
    /// e.g. game.time), `down`, or `any` (default).
    #[serde(default)]
    pub moves: Monotone,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    #[default]
    Bigger,
    Smaller,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Monotone {
    Up,
    Down,
    #[default]
    Any,
}

/// Playout weights: the game's action groups, uniform random play, or weights per group name.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Groups {
    Named(GroupsNamed),
    Weights(BTreeMap<String, f64>),
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum GroupsNamed {
    /// The weights declared in the game (`actionGroup`).
    Game,
    /// Every legal move equally likely.
    Uniform,
    /// Every group equally likely.
    Equal,
}

impl Default for Groups {
    fn default() -> Groups {
        Groups::Named(GroupsNamed::Game)
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SearchSection {
    /// `mcts` or `nmcs`.
    #[serde(default = "mcts")]
    pub algorithm: String,
    /// NMCS nesting level.
    #[serde(default = "two")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 0, 8>")]
    pub nmcs_level: u32,
    /// Budget in wall-clock milliseconds (for the whole game) …
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 604_800_000>")]
    pub budget_ms: Option<u64>,
    /// … or in iterations (deterministic per seed). Default: 10000 iterations.
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 10_000_000_000>")]
    pub iterations: Option<u64>,
    /// Number of chained sub-games (1 = one search to the last goal). Default: one per goal.
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 10_000>")]
    pub subgoals: Option<usize>,
    /// `ucb1`, `ucb_tuned1`, `ucb_tuned2`, `sp_mcts`, `ucb_for_sp`, or a formula such as
    /// `mean + 0.3 * sqrt(ln(parent) / visits)`.
    #[serde(default = "ucb1")]
    pub formula: String,
    /// Exploration constant C of the named formulas.
    #[serde(default = "c_default")]
    pub c: f64,
    /// D of the named formulas (UCB1: 2; UCB-Tuned: a small variance floor; SP-MCTS: large).
    #[serde(default = "d_default")]
    pub d: f64,
    /// w of UCB for SP (weight of the best reward).
    #[serde(default)]
    pub w: f64,
    #[serde(default)]
    pub groups: Groups,
    #[serde(default)]
    pub duplicate_detection: bool,
    #[serde(default)]
    pub add_best_path: bool,
    /// CUT_OFF: skip fully explored subtrees; stop when the root is exhausted.
    #[serde(default)]
    pub cut_off: bool,
    /// Forfeit factor: a playout stops, scored 0, once its optimistic bound × factor falls below
    /// the best result so far. The thesis's prototype default is 2 (E12 found 1 best); 0 = off.
    /// Only acts when the result formula has a bound (a term that can only get worse, such as
    /// elapsed time when smaller is better).
    #[serde(default = "forfeit_default")]
    pub forfeit: f64,
    /// Non-tree (global) selection until the tree has this many nodes.
    pub non_tree_until: Option<usize>,
    /// Progressive widening: initial children cap.
    #[serde(default)]
    #[serde(deserialize_with = "crate::config::opt_count::<_, _, 1, 1_000_000>")]
    pub widening: Option<usize>,
    /// Node limit per level: softening factor x.
    pub node_limit: Option<f64>,
    #[serde(default = "one_usize")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000>")]
    pub split_runs: usize,
    #[serde(default = "one_usize")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 4_096>")]
    pub root_parallel: usize,
    #[serde(default = "one_usize")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 256>")]
    pub tree_parallel: usize,
}

fn mcts() -> String {
    "mcts".into()
}
fn ucb1() -> String {
    "ucb1".into()
}
fn two() -> u32 {
    2
}
fn c_default() -> f64 {
    0.7
}
fn d_default() -> f64 {
    2.0
}
fn forfeit_default() -> f64 {
    2.0
}
fn one_usize() -> usize {
    1
}

impl Default for SearchSection {
    fn default() -> SearchSection {
        toml::from_str("").expect("every search key has a default")
    }
}

/// A config error: the file and what is wrong, with the toml crate's line and column.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// The TOML did not read: `file:line:column: message` and the line.
    #[error("{0}")]
    Toml(String),
}

/// What a run under a wall-clock budget says about its numbers (in its output and its
/// resolved config).
pub const NOT_REPRODUCIBLE: &str = "Not reproducible: the search has a wall-clock budget (budget_ms), so how many iterations it runs, and so its result, depend on this machine's speed and load; the same seed can give other numbers. Use `iterations = N` for reproducible runs.";

impl PlayConfig {
    pub fn load(path: &Path) -> Result<PlayConfig, ConfigError> {
        let text = crate::input::read_text(path)?;
        let mut cfg = Self::parse(&path.display().to_string(), &text)?;
        // Paths in a config are relative to the config file.
        cfg.experiment.game = crate::config::resolve_path(path, &cfg.experiment.game);
        Ok(cfg)
    }

    pub fn parse(name: &str, text: &str) -> Result<PlayConfig, ConfigError> {
        Self::parse_located(name, text, true)
    }

    /// `located`: `text` is the user's file, so errors can name its lines (a merged table's
    /// text is not).
    fn parse_located(name: &str, text: &str, located: bool) -> Result<PlayConfig, ConfigError> {
        let cfg: PlayConfig = crate::config::toml(name, text).map_err(ConfigError::Toml)?;
        cfg.validate(name, located.then_some(text))?;
        Ok(cfg)
    }

    /// From a TOML table (used by experiments after merging overrides).
    pub fn from_table(name: &str, table: toml::Table) -> Result<PlayConfig, ConfigError> {
        let text = toml::to_string(&table).map_err(|e| ConfigError::Invalid { path: name.into(), message: e.to_string() })?;
        Self::parse_located(name, &text, false)
    }

    /// Checks what parsed but makes no sense; each error names `file:line:column` of its key
    /// (in `text`, the config as read).
    fn validate(&self, name: &str, text: Option<&str>) -> Result<(), ConfigError> {
        let path = Path::new(name);
        let bad = |table: &str, key: &str, message: String| {
            let path = match text {
                Some(text) => crate::config::locate(path, text, table, 0, key),
                None => name.to_string(),
            };
            Err(ConfigError::Invalid { path, message })
        };
        if self.result.terms.is_empty() {
            return bad(
                "result",
                "terms",
                "[result] needs at least one term, e.g. terms = [{ value = \"global.coins\", weight = 1.0, max = 2400 }]".into(),
            );
        }
        for t in &self.result.terms {
            if !(t.max > t.min) {
                return bad("result", "terms", format!("result term `{}`: max ({}) must be greater than min ({})", t.value, t.max, t.min));
            }
            if !(t.weight >= 0.0) {
                return bad("result", "terms", format!("result term `{}`: weight must be ≥ 0", t.value));
            }
        }
        let s = &self.search;
        if s.budget_ms.is_some() && s.iterations.is_some() {
            return bad("search", "iterations", "[search] give either budget_ms or iterations, not both".into());
        }
        if s.algorithm != "mcts" && s.algorithm != "nmcs" {
            return bad("search", "algorithm", format!("[search] algorithm = \"{}\": expected \"mcts\" or \"nmcs\"", s.algorithm));
        }
        if let Err(e) = self.formula() {
            return bad("search", "formula", format!("[search] formula: {e}"));
        }
        if !(s.forfeit == 0.0 || s.forfeit >= 1.0) {
            return bad(
                "search",
                "forfeit",
                format!("[search] forfeit = {}: expected 0 (off) or a factor ≥ 1 (the thesis's default is 2, best 1)", s.forfeit),
            );
        }
        Ok(())
    }

    pub fn formula(&self) -> Result<Formula, String> {
        let s = &self.search;
        formula_by_name_or_text(&s.formula, s.c, s.d, s.w).map_err(|e| e.to_string())
    }

    /// A wall-clock budget (`budget_ms`): the run's numbers are not reproducible.
    pub fn timed(&self) -> bool {
        matches!(self.budget(), Budget::Millis(_))
    }

    pub fn budget(&self) -> Budget {
        match (self.search.budget_ms, self.search.iterations) {
            (Some(ms), _) => Budget::Millis(ms),
            (None, Some(n)) => Budget::Iterations(n),
            (None, None) => Budget::Iterations(10_000),
        }
    }

    /// The search settings for a game with these group names and declared weights.
    pub fn plan_config(&self, group_names: &[String], declared: &[f64]) -> Result<PlanConfig, String> {
        let s = &self.search;
        let group_weights = match &s.groups {
            Groups::Named(GroupsNamed::Game) => Some(declared.to_vec()),
            Groups::Named(GroupsNamed::Uniform) => None,
            Groups::Named(GroupsNamed::Equal) => Some(vec![1.0; declared.len()]),
            Groups::Weights(m) => {
                for k in m.keys() {
                    if !group_names.contains(k) {
                        return Err(format!("[search] groups: the game has no action group `{k}` (it has: {})", group_names.join(", ")));
                    }
                }
                Some(group_names.iter().map(|g| m.get(g).copied().unwrap_or(0.0)).collect())
            }
        };
        Ok(PlanConfig {
            algorithm: if s.algorithm == "nmcs" { Algorithm::Nmcs(s.nmcs_level) } else { Algorithm::Mcts },
            mcts: MctsConfig {
                formula: self.formula()?,
                group_weights,
                duplicate_detection: s.duplicate_detection,
                add_best_path: s.add_best_path,
                forfeit: if s.forfeit > 0.0 { Some(s.forfeit) } else { None },
                non_tree_until: s.non_tree_until,
                widening: s.widening,
                node_limit_factor: s.node_limit,
                max_playout_moves: 100_000,
                cut_off: s.cut_off,
                retry_duplicates: true,
                ..MctsConfig::default()
            },
            budget: self.budget(),
            subgoals: s.subgoals.unwrap_or(usize::MAX),
            split_runs: s.split_runs,
            root_parallel: s.root_parallel,
            tree_parallel: s.tree_parallel,
            seed: self.experiment.seed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = "[experiment]\nname = \"x\"\ngame = \"games/simple_coins.wgdl\"\n[result]\nterms = [{ value = \"global.coins\", weight = 1.0, max = 2400 }]\n";

    #[test]
    fn defaults_and_unknown_keys() {
        let c = PlayConfig::parse("x.toml", MIN).unwrap();
        assert_eq!(c.budget(), Budget::Iterations(10_000));
        assert_eq!(c.search.groups, Groups::Named(GroupsNamed::Game));
        let e = PlayConfig::parse("x.toml", &format!("{MIN}[search]\nbudget = 5\n")).unwrap_err().to_string();
        assert!(e.starts_with("x.toml:7:1: unknown field `budget`") && e.contains("7 | budget = 5"), "{e}");
    }

    #[test]
    fn checks_after_parsing_name_the_key_line() {
        let e = PlayConfig::parse("x.toml", &format!("{MIN}[search]\nalgorithm = \"dfs\"\n")).unwrap_err().to_string();
        assert!(e.starts_with("x.toml:7:1: [search] algorithm = \"dfs\""), "{e}");
        let e = PlayConfig::parse("x.toml", &format!("{MIN}[search]\niterations = 5\nbudget_ms = 9\n")).unwrap_err().to_string();
        assert!(e.starts_with("x.toml:7:1:"), "{e}");
    }

    #[test]
    fn formulas_by_name_or_text() {
        let c = PlayConfig::parse("x.toml", &format!("{MIN}[search]\nformula = \"mean + 0.5 * sqrt(ln(parent) / visits)\"\n")).unwrap();
        assert!(c.formula().is_ok());
        let e = PlayConfig::parse("x.toml", &format!("{MIN}[search]\nformula = \"mean + bogus\"\n")).unwrap_err().to_string();
        assert!(e.contains("formula"), "{e}");
    }

    #[test]
    fn overrides_merge_into_tables() {
        use crate::config::merge;
        let mut base: toml::Table = toml::from_str(MIN).unwrap();
        let over: toml::Table = toml::from_str("[search]\nc = 0.1\n[experiment]\nseed = 9\n").unwrap();
        merge(&mut base, &over);
        let c = PlayConfig::from_table("x", base).unwrap();
        assert_eq!(c.search.c, 0.1);
        assert_eq!(c.experiment.seed, 9);
        assert_eq!(&*c.experiment.name, "x");
    }
}
