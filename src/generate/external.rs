//! `generate` on a game that runs in its own process (`[external]`, docs/bridge.md). A
//! candidate is parameter values sent in each episode's settings; a fitness game is one
//! episode under the game's seed: a `game` player is the game's own default policy (an empty
//! prefix), a `persona` is Monster Carlo's prefix-tree search of `iterations` rollouts on that
//! seed, its record the best rollout's outcome. A measure reads the outcome: its score, one of
//! the measures the game declares, `length` (its decisions) or `ended`. The processes are lent
//! to the executor's threads ([`Shelf`]); a game that fails past its retries stops the run with
//! the game's error, never a number made up.

use super::config::{GenerateConfig, PlayerConfig};
use super::play::{GameRecord, Quantity, Table};
use crate::bridge::protocol::{Episode, Hello, Outcome};
use crate::bridge::shelf::Shelf;
use crate::bridge::tree::{self, Streams, TreeConfig};
use anyhow::{Result, anyhow, bail};
use std::path::Path;

/// How an external game is played for generate.
pub struct External {
    pub hello: Hello,
    shelf: Shelf,
    /// One per `[[player]]`.
    seats: Vec<ExternalSeat>,
}

/// A player on an external game.
struct ExternalSeat {
    style: Option<String>,
    variant: Option<String>,
    /// `None`: the game's default policy; else the search and its rollouts.
    search: Option<(TreeConfig, u64)>,
}

impl External {
    /// Checks the players and measures against the game's hello.
    pub fn new(
        cfg: &GenerateConfig,
        cfg_path: &Path,
        cfg_text: &str,
        ext: &crate::bridge::config::External,
        hello: Hello,
    ) -> Result<External> {
        let at = |table: &str, nth: usize, key: &str| crate::config::locate(cfg_path, cfg_text, table, nth, key);
        for (k, m) in cfg.measures.iter().enumerate() {
            if m.players.len() != 1 {
                bail!(
                    "{}: players = {:?}; expected one player (an external game has one seat: the search's)",
                    at("measure", k, "players"),
                    m.players
                );
            }
            let fits = match m.of.as_str() {
                "score" | "game.score" | "length" | "ended" => true,
                of => hello.measures.iter().any(|x| x == of),
            };
            if !fits {
                bail!(
                    "{}: of = \"{}\"; expected \"score\", \"length\" (decisions), \"ended\" or one of game {:?}'s measures: {}",
                    at("measure", k, "of"),
                    m.of,
                    hello.game,
                    hello.measures.join(", ")
                );
            }
            for (key, bad) in [("aggregate", m.aggregate != "final"), ("when", m.when.is_some())] {
                if bad {
                    bail!("{}: {key} on an external game; expected none (a measure reads the episode's outcome)", at("measure", k, key));
                }
            }
        }
        let seats =
            cfg.players.iter().enumerate().map(|(k, p)| seat(p, &hello, &|key| at("player", k, key))).collect::<Result<Vec<_>>>()?;
        let shelf = Shelf::new(ext.launch(serde_json::json!({})), ext.retries);
        Ok(External { hello, shelf, seats })
    }

    /// One game of `table` under `seed` with the candidate's parameter values.
    pub fn play(&self, params: &[(String, f64)], table: &Table, seed: u64) -> Result<GameRecord> {
        let seat = &self.seats[table.players[0]];
        let params: serde_json::Map<String, serde_json::Value> = params.iter().map(|(n, v)| (n.clone(), serde_json::json!(v))).collect();
        let settings = serde_json::json!({"style": seat.style, "variant": seat.variant, "params": params});
        let outcome = match &seat.search {
            None => {
                let policy_seed = crate::rng::derive(seed, 2, 0, 0);
                let ep = Episode { id: 0, seed, policy_seed, settings, prefix: Vec::new() };
                self.shelf.play(&ep).map_err(|f| anyhow!("game {:?}, seed {seed}: {f}", self.hello.game))?
            }
            Some((tree_cfg, rollouts)) => {
                let streams = Streams { seed, replicate: 0, stream: table.players[0] as u64 };
                let found = tree::search(&mut self.shelf.episodes(), tree_cfg, seed, &settings, *rollouts, &streams, |_, _| true)
                    .map_err(|e| anyhow!("game {:?}, seed {seed}: {e}", self.hello.game))?;
                found.best_outcome.ok_or_else(|| anyhow!("game {:?}, seed {seed}: no rollout of the search scored", self.hello.game))?
            }
        };
        let q = table.quantities.iter().map(|q| read(q, &outcome)).collect::<Result<_>>()?;
        Ok(GameRecord { q, ended: true, stuck: false })
    }
}

/// What a measure reads in an outcome.
fn read(q: &Quantity, o: &Outcome) -> Result<f64> {
    match q {
        Quantity::Value { path, .. } if path == "score" || path == "game.score" => Ok(o.score),
        Quantity::Value { path, .. } => o
            .measures
            .get(path)
            .copied()
            .ok_or_else(|| anyhow!("the outcome has no measure `{path}`; it has {:?}", o.measures.keys().collect::<Vec<_>>())),
        Quantity::Length => Ok(o.trace.len() as f64),
        Quantity::Ended => Ok(1.0),
        other => bail!("{other:?} is not a measure of an external game"),
    }
}

/// A player checked against the game: its style and variant (from `overlays`), and for a
/// persona its search.
fn seat(p: &PlayerConfig, hello: &Hello, at: &dyn Fn(&str) -> String) -> Result<ExternalSeat> {
    let style = p.overlays.iter().find(|o| hello.styles.contains(o)).cloned();
    let variant = p.overlays.iter().find(|o| hello.variants.contains(o)).cloned();
    if p.kind == "game" {
        return Ok(ExternalSeat { style, variant, search: None });
    }
    let refuse = |key: &str, why: &str| -> Result<()> { bail!("{}: {key} on a persona of an external game; {why}", at(key)) };
    if p.direction != "max" {
        refuse("direction", "expected \"max\" (the prefix tree keeps the best score; declare the opposite measure in the game)")?;
    }
    if p.aggregate != "final" {
        refuse("aggregate", "expected \"final\" (the search reads the outcome)")?;
    }
    if p.goal.is_some() {
        refuse("goal", "expected `scale = [low, high]`, the measure's range that sets UCB1's c on the score's scale")?;
    }
    if p.rollout_horizon != 0 || p.final_choice.is_some() {
        refuse("rollout_horizon", "expected none (a rollout is a whole episode; the best one is kept)")?;
    }
    let measure = crate::bridge::config::measure(hello, &p.measure, || at("measure"))?;
    let formula = match (&p.formula, &p.formula_file) {
        (None, None) => None,
        _ => Some(super::play::persona_formula(p).map_err(|e| anyhow!("{}: {e}", at("formula")))?),
    };
    let c = p.c.unwrap_or(std::f64::consts::SQRT_2);
    let width = p.scale.map_or(1.0, |[lo, hi]| hi - lo);
    let tree_cfg = TreeConfig { uct: c * width, cut_off: true, save_best_path: true, workers: 1, measure, formula, reward: None };
    Ok(ExternalSeat { style, variant, search: Some((tree_cfg, p.iterations)) })
}
