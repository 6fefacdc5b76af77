//! The playtest config (TOML): a game, the score to maximize, the search (Monster Carlo's UCT
//! over the whole game with raw-score rewards), and the three axes of conditions — `[[search]]`
//! settings, `[[style]]` play styles and `[[variant]]` design variants. A style or variant
//! switches on named overlays of the game file (`style lazy: …` lines, games/README.md §9.16)
//! and may add parameters (variants), playout weights and a selection formula (styles). On a
//! game of two or more sides the same file runs self-play games instead
//! ([`super::selfplay`]): a replicate is one game, `rollouts` are per move and `uct` is on the
//! scale of a win. Every error names `file:line:column` and says what was expected.

use crate::config::locate;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The whole file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlaytestConfig {
    pub playtest: Settings,
    /// Parameter overrides shared by every condition (`"me.colours" = 4`).
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
    #[serde(default, rename = "search")]
    pub searches: Vec<SearchArm>,
    #[serde(default, rename = "style")]
    pub styles: Vec<Style>,
    #[serde(default, rename = "variant")]
    pub variants: Vec<Variant>,
    /// A game that runs in its own process (docs/bridge.md): `game` then names its main file
    /// (read for the run's key) and this table how to start it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<crate::bridge::config::External>,
}

/// `[playtest]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Output folder: `outputs/<name>/seed-<seed>/`.
    pub name: String,
    /// The game (relative to the working directory).
    pub game: PathBuf,
    /// The game value maximized and reported (raw, not normalized); refused on a game of sides.
    #[serde(default = "score")]
    pub score: String,
    #[serde(default = "one")]
    pub seed: u64,
    /// Independent searches per condition (the thesis: 20); on a game of sides, self-play games
    /// per condition.
    #[serde(default = "twenty")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 100_000>")]
    pub replicates: u64,
    /// Rollouts (MCTS iterations from the start of the game) per search (the thesis: 30 000); on
    /// a game of sides, MCTS iterations per move.
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 1_000_000_000>")]
    pub rollouts: u64,
    /// `per_replicate`: replicate r plays chance seed derive(seed, r) in every condition;
    /// `shared`: every search plays one seed (the thesis's single determinized seed).
    #[serde(default = "per_replicate")]
    pub game_seed: String,
    /// The UCT constant c in x̄ + c·√(ln N / n), on the scale of the raw score (the thesis: about
    /// the score of a moderately skilled player; 2 is "traditional"). On a game of sides the
    /// reward is a win (0 or 1): √2 ≈ 1.4 is UCB1's constant.
    pub uct: f64,
    /// `factored` (kind first, then the move) or `flat` (one choice among all moves).
    #[serde(default = "factored")]
    pub encoding: String,
    /// CUT_OFF: mark fully explored subtrees and stop when the root is exhausted.
    #[serde(default = "yes")]
    pub cut_off: bool,
    /// Save best path: on a new best rollout, add its whole trace to the tree.
    #[serde(default)]
    pub save_best_path: bool,
    /// Moves in one rollout before it is cut (and scored as it stands): a limit, not a rule.
    #[serde(default = "max_moves")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 10_000_000>")]
    pub max_playout_moves: u32,
    /// A known maximum of the score: any search that beats it is flagged as a possible bug in
    /// the game (the thesis's 2 × 3 board check). Refused on a game of sides.
    pub upper_bound: Option<f64>,
    /// Explicit conditions as "search/style/variant" names (axes with one entry may be left
    /// out: "lazy/regular"); default: every combination.
    pub conditions: Option<Vec<String>>,
}

/// `[[search]]`: a named set of search settings that differ from `[playtest]`'s.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArm {
    pub name: String,
    pub uct: Option<f64>,
    pub encoding: Option<String>,
    pub cut_off: Option<bool>,
    pub save_best_path: Option<bool>,
}

/// `[[style]]`: a play style.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Style {
    pub name: String,
    /// Overlays of the game file to switch on (default: the style's name if the file declares
    /// it, else none — an unrestricted player).
    pub overlays: Option<Vec<String>>,
    /// Softmax playout weights per action: a rollout picks an action kind with probability
    /// ∝ exp(weight) among the kinds with a legal move (unnamed kinds weigh 0), then a move of
    /// it uniformly. Empty: uniform rollouts.
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
    /// A selection formula replacing UCT (e.g. a persona's best_formula.txt line), over the raw
    /// score: `wins`, `visits`, `parent`, `mean`, … as in `playforge personas`.
    pub formula: Option<String>,
    /// The formula from a file instead: a persona's `best_formula.txt` (its first line that is
    /// not a `#` comment).
    pub formula_file: Option<PathBuf>,
}

/// `[[variant]]`: a design variant.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    /// Overlays of the game file to switch on (default: the variant's name if the file declares
    /// it, else none).
    pub overlays: Option<Vec<String>>,
    /// Parameter values of this variant (over `[parameters]`).
    #[serde(default)]
    pub parameters: BTreeMap<String, f64>,
}

fn score() -> String {
    "game.score".into()
}
fn one() -> u64 {
    1
}
fn twenty() -> u64 {
    20
}
fn per_replicate() -> String {
    "per_replicate".into()
}
fn factored() -> String {
    "factored".into()
}
fn yes() -> bool {
    true
}
fn max_moves() -> u32 {
    10_000
}

fn folder_name(s: &str) -> bool {
    !s.is_empty() && !s.contains(['/', '\\']) && !s.starts_with('.')
}

impl PlaytestConfig {
    /// Reads, parses and checks a config.
    pub fn load(path: &Path) -> Result<(PlaytestConfig, String)> {
        let text = crate::input::read_text(path)?;
        let mut cfg = Self::parse(path, &text)?;
        // Paths in a config are relative to the config file.
        cfg.playtest.game = crate::config::resolve_path(path, &cfg.playtest.game);
        if let Some(e) = &mut cfg.external {
            e.resolve(path, &cfg.playtest.game);
        }
        for st in &mut cfg.styles {
            if let Some(f) = &st.formula_file {
                st.formula_file = Some(crate::config::resolve_path(path, f));
            }
        }
        Ok((cfg, text))
    }

    /// Parses and checks everything that needs no game (the runner checks names against it).
    pub fn parse(path: &Path, text: &str) -> Result<PlaytestConfig> {
        let mut cfg: PlaytestConfig = crate::config::toml(&path.display().to_string(), text).map_err(|e| anyhow!(e))?;
        let at = |table: &str, nth: usize, key: &str| locate(path, text, table, nth, key);
        let s = &cfg.playtest;
        if !folder_name(&s.name) {
            bail!("{}: name = \"{}\"; expected a folder name for outputs/<name>/", at("playtest", 0, "name"), s.name);
        }
        if !matches!(s.game_seed.as_str(), "per_replicate" | "shared") {
            bail!("{}: game_seed = \"{}\"; expected \"per_replicate\" or \"shared\"", at("playtest", 0, "game_seed"), s.game_seed);
        }
        check_uct(s.uct, || at("playtest", 0, "uct"))?;
        if let Some(e) = &cfg.external {
            e.check(|k| at("external", 0, k))?;
        }
        check_encoding(&s.encoding, || at("playtest", 0, "encoding"))?;
        for (k, a) in cfg.searches.iter().enumerate() {
            if let Some(c) = a.uct {
                check_uct(c, || at("search", k, "uct"))?;
            }
            if let Some(e) = &a.encoding {
                check_encoding(e, || at("search", k, "encoding"))?;
            }
        }
        for (k, st) in cfg.styles.iter().enumerate() {
            if st.formula.is_some() && st.formula_file.is_some() {
                bail!("{}: both formula and formula_file; expected one of them", at("style", k, "formula_file"));
            }
            for (action, w) in &st.weights {
                if !w.is_finite() || w.abs() > 50.0 {
                    bail!("{}: {action} = {w}; expected a weight between -50 and 50 (softmax: e^w)", at("style", k, action));
                }
            }
        }
        let names = |table: &str, list: Vec<&str>| -> Result<()> {
            for (k, n) in list.iter().enumerate() {
                if !folder_name(n) {
                    bail!("{}: name = \"{n}\"; expected a name usable in file names", at(table, k, "name"));
                }
                if let Some(j) = list[..k].iter().position(|m| m == n) {
                    bail!(
                        "{}: a second {table} called \"{n}\" (the first is number {}); expected distinct names",
                        at(table, k, "name"),
                        j + 1
                    );
                }
            }
            Ok(())
        };
        names("search", cfg.searches.iter().map(|a| a.name.as_str()).collect())?;
        names("style", cfg.styles.iter().map(|a| a.name.as_str()).collect())?;
        names("variant", cfg.variants.iter().map(|a| a.name.as_str()).collect())?;
        // One unnamed default on an axis the file leaves out.
        if cfg.searches.is_empty() {
            cfg.searches.push(SearchArm { name: "search".into(), ..SearchArm::default() });
        }
        if cfg.styles.is_empty() {
            cfg.styles.push(Style { name: "unrestricted".into(), ..Style::default() });
        }
        if cfg.variants.is_empty() {
            cfg.variants.push(Variant { name: "base".into(), ..Variant::default() });
        }
        Ok(cfg)
    }

    /// The conditions to run as (search, style, variant) indices, in order: the explicit list
    /// or every combination. `at` locates `conditions` for errors.
    pub fn conditions(&self, at: impl Fn() -> String) -> Result<Vec<(usize, usize, usize)>> {
        let all: Vec<(usize, usize, usize)> = (0..self.searches.len())
            .flat_map(|a| (0..self.styles.len()).flat_map(move |s| (0..self.variants.len()).map(move |v| (a, s, v))))
            .collect();
        let Some(list) = &self.playtest.conditions else { return Ok(all) };
        if list.is_empty() {
            bail!("{}: conditions = []; expected at least one \"style/variant\" name (or leave the key out for all)", at());
        }
        let mut out = Vec::new();
        for want in list {
            let hit = all.iter().find(|&&c| self.condition_name(c) == *want || self.full_name(c) == *want);
            match hit {
                Some(&c) if out.contains(&c) => bail!("{}: \"{want}\" is listed twice; expected distinct conditions", at()),
                Some(&c) => out.push(c),
                None => {
                    let known: Vec<String> = all.iter().map(|&c| self.condition_name(c)).collect();
                    bail!("{}: no condition \"{want}\"; expected one of {}", at(), known.join(", "));
                }
            }
        }
        Ok(out)
    }

    /// "search/style/variant" with every axis that has a single entry left out.
    pub fn condition_name(&self, (a, s, v): (usize, usize, usize)) -> String {
        let mut parts = Vec::new();
        if self.searches.len() > 1 {
            parts.push(self.searches[a].name.as_str());
        }
        if self.styles.len() > 1 {
            parts.push(self.styles[s].name.as_str());
        }
        if self.variants.len() > 1 || parts.is_empty() {
            parts.push(self.variants[v].name.as_str());
        }
        parts.join("/")
    }

    fn full_name(&self, (a, s, v): (usize, usize, usize)) -> String {
        format!("{}/{}/{}", self.searches[a].name, self.styles[s].name, self.variants[v].name)
    }
}

fn check_uct(c: f64, at: impl Fn() -> String) -> Result<()> {
    if !(c.is_finite() && c >= 0.0) {
        bail!("{}: uct = {c}; expected a constant ≥ 0 on the scale of the score (e.g. a typical score)", at());
    }
    Ok(())
}

fn check_encoding(e: &str, at: impl Fn() -> String) -> Result<()> {
    if !matches!(e, "factored" | "flat") {
        bail!("{}: encoding = \"{e}\"; expected \"factored\" (kind first, then the move) or \"flat\"", at());
    }
    Ok(())
}
