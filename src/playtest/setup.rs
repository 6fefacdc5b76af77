//! What a playtest run is made of, below its worker and its driver: the [`Setup`] (the config
//! with one compiled [`Condition`] per search × style × variant), a finished [`Replicate`], the
//! run's [`Outcome`], and the stop flag. The worker (`jobs.rs`: one replicate), self-play
//! (`selfplay.rs`) and the driver (`run.rs`: the loop and the reports) all read these.

use super::config::{PlaytestConfig, Settings};
use super::encode::Encoded;
use crate::exec::Executor;
use crate::game::WgdlGame;
use crate::rng;
use crate::search::formula::Formula;
use crate::search::mcts::MctsConfig;
use crate::wgdl::CompileOptions;
use crate::wgdl::probe::ValueRef;
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One experimental condition, compiled.
pub struct Condition {
    pub name: String,
    /// The name as a file name ("lazy-regular").
    pub file: String,
    /// What is searched, and how.
    pub play: Play,
    /// What the condition is, for the summary: overlays, parameters, encoding, c, weights.
    pub describe: String,
    /// Where the condition's random streams come from (a hash of its full name).
    pub stream: u64,
    pub overlays: Vec<String>,
    pub params: Vec<(String, f64)>,
}

/// A condition's game and search.
pub enum Play {
    /// A WGDL game under MCTS. `score`: the value searched; `None` in a game of sides, where a
    /// self-play game records wins.
    Wgdl { game: Encoded<WgdlGame>, score: Option<ValueRef>, mcts: MctsConfig },
    /// A game in its own process ([`super::external`]): the episodes' settings and the
    /// prefix-tree search.
    External { settings: serde_json::Value, tree: crate::bridge::tree::TreeConfig },
}

/// Everything a run needs.
pub struct Setup {
    pub cfg: PlaytestConfig,
    pub out_dir: PathBuf,
    pub conditions: Vec<Condition>,
    /// A hash of the resolved config, the game's text and its hex map (where it has one):
    /// replicate files from another config or game are not reused.
    pub key: String,
    /// The keys older versions wrote (the resolved config with its paths as given; the key
    /// without the map): their replicate files are still this run's.
    pub legacy_keys: [String; 2],
    pub game_path: PathBuf,
    /// The game's hash by the one rule ([`crate::drive::game::game_hash`]: text and map), as
    /// this process read it; a worker's must equal the driver's.
    pub game_hash: u64,
    /// The config's path and text (for jobs sent elsewhere).
    pub config_path: PathBuf,
    pub text: String,
    /// Where the replicates run (this process by default; `--ray` elsewhere).
    pub exec: Executor,
    /// The game's sides when it has two or more (`players a b`): then every replicate is one
    /// self-play game ([`super::selfplay`]); empty for a one-player game.
    pub sides: Vec<String>,
}

/// FNV-1a, for stable names → numbers (stream ids, config keys).
pub fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

impl Setup {
    /// A WGDL game's setup: one program compiled per condition, every name the config uses
    /// checked against the game ([`Setup::new`], in `external.rs`, chooses this or an
    /// external game's).
    pub fn wgdl(cfg: PlaytestConfig, text: &str, config_path: &Path, out_root: &Path) -> Result<Setup> {
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
                check_settings(s, &at)?;
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
            let formula_text = style_formula(style, &|key| at("style", st, key))?;
            let formula = match &formula_text {
                Some((f, _)) => f.clone(),
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
                Some((_, f)) => format!("formula {f}"),
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
                play: Play::Wgdl { game, score, mcts },
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
        // The map as compiled, where the game has one: a changed map file is another game
        // (as in every driver's key).
        let map = probe.hex.as_ref().map(|m| format!("\n--- map\n{}", m.render(|_| None))).unwrap_or_default();
        // One folder per (config name, seed): runs with another seed never overwrite it.
        let out_dir = out_root.join(&cfg.playtest.name).join(format!("seed-{}", cfg.playtest.seed));
        Ok(Setup {
            out_dir,
            key: format!("{:016x}", fnv(&format!("{key_text}{map}"))),
            legacy_keys: [format!("{:016x}", fnv(&legacy_text)), format!("{:016x}", fnv(&key_text))],
            game_hash: crate::drive::game::game_hash(&game_text, &probe),
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
    /// An external game's rollouts that ended without an outcome (after their retries).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<crate::bridge::tree::Failure>,
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

/// How a self-play game ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Played {
    /// The side that won (its index among the game's players); `None`: nobody did.
    pub winner: Option<usize>,
    /// The winner's name, `draw`, `turn limit`, `stuck`, … or `cut` (the game passed
    /// `max_playout_moves` moves and was stopped, a limit and not a rule).
    pub result: String,
    /// Moves played (the trace's length).
    pub moves: u32,
    /// Each side's return: +1 for the winner and −1 for the others, 0 for all without a
    /// winner (OpenSpiel's convention, as the doors report it).
    pub returns: Vec<f64>,
}

/// What a run produced: every replicate of every condition, in order.
pub struct Outcome {
    pub reps: Vec<Vec<Replicate>>,
    pub interrupted: bool,
}

/// The `[playtest]` keys that only a one-player search reads, refused on a game of sides at
/// their line: the score (a game of sides is judged by who wins) and its upper bound.
fn check_settings(s: &Settings, at: &impl Fn(&str, usize, &str) -> String) -> Result<()> {
    if s.score != "game.score" {
        bail!(
            "{}: score = \"{}\" on a game of sides; expected no `score` (a two-player playtest records who wins, the draws and the length)",
            at("playtest", 0, "score"),
            s.score
        );
    }
    if let Some(b) = s.upper_bound {
        bail!(
            "{}: upper_bound = {b} on a game of sides; expected no `upper_bound` (it bounds a one-player score)",
            at("playtest", 0, "upper_bound")
        );
    }
    Ok(())
}

/// A style's selection formula (`formula`, or the first line of `formula_file` that is not a
/// `#` comment) with its text; `None` for UCB1. `at(key)` locates a key of the style.
pub(super) fn style_formula(style: &super::config::Style, at: &dyn Fn(&str) -> String) -> Result<Option<(Formula, String)>> {
    let (text, key) = match (&style.formula, &style.formula_file) {
        (Some(f), _) => (f.clone(), "formula"),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{}: cannot read {}: {e}", at("formula_file"), path.display()))?;
            let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
            let line = line.ok_or_else(|| anyhow!("{}: {} holds no formula line", at("formula_file"), path.display()))?;
            (line.to_string(), "formula_file")
        }
        (None, None) => return Ok(None),
    };
    let f = Formula::parse(&text).map_err(|e| anyhow!("{}: {e}", at(key)))?;
    Ok(Some((f, text)))
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
