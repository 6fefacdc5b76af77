//! Personas on a game that runs in its own process (`[external]`, docs/bridge.md): the
//! selection formula GP evolves drives Monster Carlo's prefix tree instead of MCTS. One persona
//! game is one search of `iterations` whole episodes under the game's seed, the formula (or
//! vanilla UCB1) reading each child's statistics of the persona's measure mapped onto [0, 1]
//! by its `range` (upward or downward); its result is the best episode's outcome. The random
//! player is the game's own default policy (one episode, an empty prefix). An episode's mean
//! options per decision stands for the legal moves.

use super::config::{Persona, PersonaConfig};
use super::play::{Agent, GameResult, Reward};
use crate::bridge::config::External;
use crate::bridge::protocol::{Episode, Hello, Outcome};
use crate::bridge::shelf::Shelf;
use crate::bridge::tree::{self, Scale, Streams, TreeConfig};
use anyhow::{Result, anyhow, bail};
use std::path::Path;

/// How persona games are played on an external game.
pub struct ExternalGames {
    pub hello: Hello,
    /// The game file's text and its hash (what a checkpoint and a job belong to).
    pub text: String,
    pub hash: u64,
    shelf: Shelf,
    /// The settings of every episode (the config's `[parameters]`).
    settings: serde_json::Value,
    /// `None`: the outcome's score; else one of the game's measures.
    score: Option<String>,
}

impl ExternalGames {
    /// Starts the game once to read its hello, and checks the config's names against it.
    pub fn new(cfg: &PersonaConfig, ext: &External, config_path: &Path, text: &str) -> Result<ExternalGames> {
        let at = |table: &str, nth: usize, key: &str| crate::config::locate(config_path, text, table, nth, key);
        let hello =
            crate::bridge::pool::probe(&ext.launch(serde_json::json!({}))).map_err(|e| anyhow!("{}: {e}", at("external", 0, "command")))?;
        crate::bridge::config::check_params(&hello, &cfg.parameters, |n| at("parameters", 0, n))?;
        let score = crate::bridge::config::measure(&hello, &cfg.personas.score, || at("personas", 0, "score"))?;
        for (k, p) in cfg.list.iter().enumerate() {
            crate::bridge::config::measure(&hello, &p.measure, || at("persona", k, "measure"))?;
        }
        let settings = serde_json::json!({"style": null, "variant": null, "params": cfg.parameters});
        let game_text = crate::input::read_text(&cfg.personas.game).map_err(|e| anyhow!("{}: game: {e}", at("personas", 0, "game")))?;
        let hash = crate::exec::fnv(game_text.as_bytes());
        Ok(ExternalGames {
            hello,
            text: game_text,
            hash,
            shelf: Shelf::new(ext.launch(serde_json::json!({})), ext.retries),
            settings,
            score,
        })
    }

    /// One game of persona `p` by `agent` on game seed `seed`, its streams from `stream`.
    pub fn play(&self, p: &Persona, agent: &Agent, iterations: u64, seed: u64, stream: (u64, u64, u64, u64)) -> Result<GameResult> {
        let (a, b, c, d) = stream;
        let own = crate::rng::derive(a, b, c, d);
        let fail = |e: String| anyhow!("game {:?}, seed {seed}: {e}", self.hello.game);
        let outcome = match agent {
            Agent::Random => {
                let ep = Episode { id: 0, seed, policy_seed: own, settings: self.settings.clone(), prefix: Vec::new() };
                self.shelf.play(&ep).map_err(|f| fail(f.to_string()))?
            }
            Agent::Mcts { formula, reward } => {
                let Reward::Continuous { lo, hi, maximize } = *reward else {
                    bail!("a binary reward on an external game; expected a continuous one (checked when the config loads)");
                };
                let measure = if is_score(&p.measure) { None } else { Some(p.measure.clone()) };
                let cfg = TreeConfig {
                    uct: 1.0,
                    cut_off: true,
                    save_best_path: true,
                    workers: 1,
                    measure,
                    formula: Some(formula.clone()),
                    reward: Some(Scale { lo, hi, maximize }),
                };
                let streams = Streams { seed: own, replicate: 0, stream: 0 };
                let found = tree::search(&mut self.shelf.episodes(), &cfg, seed, &self.settings, iterations, &streams, |_, _| true)
                    .map_err(|e| fail(e.to_string()))?;
                found.best_outcome.ok_or_else(|| fail("no rollout of the search scored".into()))?
            }
        };
        let read = |name: Option<&str>| -> Result<f64> {
            match name {
                None => Ok(outcome.score),
                Some(m) => outcome.measures.get(m).copied().ok_or_else(|| fail(format!("the outcome has no measure `{m}`"))),
            }
        };
        let measure = read((!is_score(&p.measure)).then_some(p.measure.as_str()))?;
        Ok(GameResult { measure, score: read(self.score.as_deref())?, legal_moves: options(&outcome), moves: outcome.trace.len() as u32 })
    }
}

fn is_score(name: &str) -> bool {
    name == "score" || name == "game.score"
}

/// Mean options per decision of an episode (0 for none).
fn options(o: &Outcome) -> f64 {
    if o.trace.is_empty() { 0.0 } else { o.trace.iter().map(|&[_, n]| n as f64).sum::<f64>() / o.trace.len() as f64 }
}
