//! The bridge's messages (protocol 1, docs/bridge.md): JSON objects, one per line. What a game
//! sends is parsed into [`FromGame`] and checked before anything reads it — a line that is not
//! JSON, an unknown `type`, a field of the wrong kind or a trace that breaks its prefix is an
//! error that says what was expected, never a panic.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The protocol this playforge speaks.
pub const PROTOCOL: u32 = 1;

/// The longest line a game may send (a trace of ~100 000 decisions).
pub const MAX_LINE: usize = 1 << 20;

/// A game's introduction.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Hello {
    pub protocol: u32,
    pub nonce: String,
    pub game: String,
    #[serde(default)]
    pub params: Vec<Param>,
    #[serde(default)]
    pub measures: Vec<String>,
    #[serde(default)]
    pub styles: Vec<String>,
    #[serde(default)]
    pub variants: Vec<String>,
}

/// A parameter the game declares (what a search may set).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Param {
    pub name: String,
    pub min: f64,
    pub max: f64,
    #[serde(default)]
    pub integer: bool,
}

/// The end of an episode as the game reports it.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Outcome {
    pub id: u64,
    pub score: f64,
    #[serde(default)]
    pub measures: BTreeMap<String, f64>,
    /// Every decision in order: `[choice, n]`.
    pub trace: Vec<[u64; 2]>,
}

/// What a game may send.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FromGame {
    Hello(Hello),
    Outcome(Outcome),
    Error { message: String },
    Log { message: String },
}

/// An episode to play.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Episode {
    pub id: u64,
    pub seed: u64,
    pub policy_seed: u64,
    pub settings: serde_json::Value,
    pub prefix: Vec<u64>,
}

impl Episode {
    /// The `episode` line (seeds as decimal strings: a JavaScript double would round them).
    pub fn line(&self) -> String {
        let msg = serde_json::json!({
            "type": "episode",
            "id": self.id,
            "seed": self.seed.to_string(),
            "policy_seed": self.policy_seed.to_string(),
            "settings": self.settings,
            "prefix": self.prefix,
        });
        format!("{msg}\n")
    }
}

/// The `welcome`, `error` and `stop` lines.
pub fn welcome() -> String {
    format!("{}\n", serde_json::json!({"type": "welcome", "protocol": PROTOCOL}))
}

pub fn error(message: &str) -> String {
    format!("{}\n", serde_json::json!({"type": "error", "message": message}))
}

pub fn stop() -> String {
    "{\"type\":\"stop\"}\n".to_string()
}

/// Parses one line from a game; the error says what was expected.
pub fn parse(line: &str) -> Result<FromGame, String> {
    let line = line.trim_end_matches(['\n', '\r']);
    serde_json::from_str(line).map_err(|e| {
        let shown: String = line.chars().take(80).collect();
        format!("the game sent {shown:?}: {e}; expected a JSON object with \"type\" hello, outcome, error or log (docs/bridge.md)")
    })
}

/// The most options one decision may offer (a tree node keeps one slot per option).
pub const MAX_OPTIONS: u64 = 1 << 20;

/// Checks an outcome against the episode it answers: its id, every choice below its n, the
/// prefix followed, a finite score and measures.
pub fn check(outcome: &Outcome, episode: &Episode) -> Result<(), String> {
    if outcome.id != episode.id {
        return Err(format!("an outcome for episode {}; expected episode {}", outcome.id, episode.id));
    }
    if !outcome.score.is_finite() || outcome.measures.values().any(|v| !v.is_finite()) {
        return Err(format!("episode {}: a score or measure that is not a finite number; expected numbers", episode.id));
    }
    for (k, &[choice, n]) in outcome.trace.iter().enumerate() {
        if n > MAX_OPTIONS {
            return Err(format!("episode {}: decision {k} offers {n} options; expected at most {MAX_OPTIONS}", episode.id));
        }
        if n == 0 || choice >= n {
            return Err(format!("episode {}: decision {k} chose {choice} of {n} options; expected a choice in [0, n)", episode.id));
        }
    }
    if outcome.trace.len() < episode.prefix.len() {
        return Err(format!(
            "episode {}: {} decisions, shorter than its prefix of {}; expected the game to replay the prefix (is it deterministic under its seed?)",
            episode.id,
            outcome.trace.len(),
            episode.prefix.len()
        ));
    }
    for (k, (&[choice, _], &want)) in outcome.trace.iter().zip(&episode.prefix).enumerate() {
        if choice != want {
            return Err(format!(
                "episode {}: decision {k} chose {choice}, its prefix says {want}; expected the prefix replayed",
                episode.id
            ));
        }
    }
    Ok(())
}
