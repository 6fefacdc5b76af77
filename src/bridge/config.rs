//! The `[external]` table of a config: how to start a game that runs in its own process, how
//! many at once, how long to wait for it and how often to try an episode again. The checks of a
//! config's names against what the game declares (its `hello`: styles, variants, parameters,
//! measures) live here too, so that every command on an external game says the same thing.

use super::process::Launch;
use super::protocol::Hello;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `[external]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct External {
    /// The program and its arguments (`["python3", "roguelike.py"]`).
    pub command: Vec<String>,
    /// Where the command runs (relative to the config; default: the game file's folder).
    pub dir: Option<PathBuf>,
    /// Game processes at once, which is also the rollouts a search has in flight (Monster
    /// Carlo's `num_workers`): a setting of the search, so results depend on it and not on the
    /// machine.
    #[serde(default = "two")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 1, 256>")]
    pub workers: usize,
    /// Times an episode is tried again on a fresh process after a crash, a hang or garbage.
    #[serde(default = "two_u32")]
    #[serde(deserialize_with = "crate::config::count::<_, _, 0, 100>")]
    pub retries: u32,
    /// Seconds to wait for a started game's `hello`.
    #[serde(default = "ten")]
    pub connect_timeout: f64,
    /// Seconds to wait for an episode's `outcome`.
    #[serde(default = "sixty")]
    pub episode_timeout: f64,
    /// Speak on the game's stdin/stdout instead of a loopback socket (`PLAYFORGE_STDIO=1`).
    #[serde(default)]
    pub stdio: bool,
}

fn two() -> usize {
    2
}
fn two_u32() -> u32 {
    2
}
fn ten() -> f64 {
    10.0
}
fn sixty() -> f64 {
    60.0
}

impl External {
    /// Checks what needs no game; `at(key)` locates a key of the table.
    pub fn check(&self, at: impl Fn(&str) -> String) -> Result<()> {
        if self.command.is_empty() || self.command[0].trim().is_empty() {
            bail!("{}: command = {:?}; expected a program and its arguments, e.g. [\"python3\", \"game.py\"]", at("command"), self.command);
        }
        for (key, v) in [("connect_timeout", self.connect_timeout), ("episode_timeout", self.episode_timeout)] {
            if !(v.is_finite() && (0.05..=86_400.0).contains(&v)) {
                bail!("{}: {key} = {v}; expected seconds between 0.05 and 86400", at(key));
            }
        }
        Ok(())
    }

    /// Makes `dir` absolute against the config's folder, or the game file's folder when unset.
    pub fn resolve(&mut self, config_path: &Path, game: &Path) {
        let dir = match &self.dir {
            Some(d) => crate::config::resolve_path(config_path, d),
            None => game.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        self.dir = Some(std::path::absolute(&dir).unwrap_or(dir));
    }

    /// How to start the game with `settings` in its environment.
    pub fn launch(&self, settings: serde_json::Value) -> Launch {
        Launch {
            command: self.command.clone(),
            dir: self.dir.clone().unwrap_or_default(),
            settings,
            connect_timeout: Duration::from_secs_f64(self.connect_timeout),
            episode_timeout: Duration::from_secs_f64(self.episode_timeout),
            stdio: self.stdio,
        }
    }
}

/// Checks `name` (a config's style or variant, `what`) against the game's list: `Some(name)`
/// when declared, `None` for the config's unnamed default (`default`) when the game does not
/// declare it, an error otherwise.
pub fn declared(hello: &Hello, what: &str, name: &str, default: &str, at: impl Fn() -> String) -> Result<Option<String>> {
    let list = if what == "style" { &hello.styles } else { &hello.variants };
    if list.iter().any(|s| s == name) {
        return Ok(Some(name.to_string()));
    }
    if name == default {
        return Ok(None);
    }
    let known = if list.is_empty() { format!("(the game declares no {what}s)") } else { list.join(", ") };
    bail!("{}: {what} \"{name}\" is not one of game {:?}'s; expected one of: {known}", at(), hello.game)
}

/// Checks parameter values against the game's declared parameters (name, range, whole
/// numbers); `at(name)` locates one.
pub fn check_params(hello: &Hello, params: &BTreeMap<String, f64>, at: impl Fn(&str) -> String) -> Result<()> {
    for (name, &v) in params {
        let Some(p) = hello.params.iter().find(|p| &p.name == name) else {
            let known: Vec<&str> = hello.params.iter().map(|p| p.name.as_str()).collect();
            bail!(
                "{}: no parameter `{name}` in game {:?}; expected one of: {}",
                at(name),
                hello.game,
                if known.is_empty() { "(it declares none)".to_string() } else { known.join(", ") }
            );
        };
        if !(v >= p.min && v <= p.max) || (p.integer && v.fract() != 0.0) {
            bail!(
                "{}: {name} = {v}; expected {} in [{}, {}] (game {:?} declares it so)",
                at(name),
                if p.integer { "a whole number" } else { "a number" },
                p.min,
                p.max,
                hello.game
            );
        }
    }
    Ok(())
}

/// Checks the score a config searches: `game.score` (the outcome's score) or one of the
/// game's measures; returns the measure (`None` for the score).
pub fn measure(hello: &Hello, score: &str, at: impl Fn() -> String) -> Result<Option<String>> {
    if score == "game.score" || score == "score" {
        return Ok(None);
    }
    if hello.measures.iter().any(|m| m == score) {
        return Ok(Some(score.to_string()));
    }
    bail!(
        "{}: score = \"{score}\"; expected \"game.score\" or one of game {:?}'s measures: {}",
        at(),
        hello.game,
        hello.measures.join(", ")
    )
}
