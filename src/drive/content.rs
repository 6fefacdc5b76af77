//! The content file, written and read in this one place: what a search command hands a designer
//! as its result — balance's `best_encounter.toml` (`[team.<name>]` tables, `[held]`), generate's
//! `best.toml` and `elites/cell-….toml` (`kind = "generate"`, `[held]`, `[genes]` and what was
//! measured) — and what `verify`, `run --params` and the run report read back.
//!
//! A file opens with `#` lines saying what it is and how to check it, then its keys (`game`, an
//! absolute path; `turn_order`; the driver's own), then its tables. [`Content::read`] gives every
//! parameter value in the file (the team tables', then `[held]`'s), the game found as written or
//! near the file, and the driver's keys as written.

use anyhow::{Result, anyhow, bail};
use std::path::{Path, PathBuf};

/// A content file being written: header, keys, tables, in that order.
pub struct Writer {
    text: String,
}

impl Writer {
    /// A file for `game` (written absolute, so that `verify` and `run --params` find it from any
    /// working folder) under `header` (its `#` lines, each ending in a newline).
    pub fn new(header: &str, game: &Path, turn_order: Option<&str>) -> Writer {
        let game = crate::report::run_dir::game_path(game);
        let mut text = format!("{header}\ngame = {}\n", toml::Value::String(game.display().to_string()));
        if let Some(o) = turn_order {
            text.push_str(&format!("turn_order = \"{o}\"\n"));
        }
        Writer { text }
    }

    /// `key = value`, the value as TOML text.
    pub fn key(&mut self, key: &str, value: &str) {
        self.text.push_str(&format!("{key} = {value}\n"));
    }

    /// A table `[name]` after a blank line and an optional `#` comment line, one `key = value`
    /// row each (keys as TOML keys, values as TOML text).
    pub fn table(&mut self, comment: Option<&str>, name: &str, rows: impl IntoIterator<Item = (String, String)>) {
        self.text.push('\n');
        if let Some(c) = comment {
            self.text.push_str(&format!("# {c}\n"));
        }
        self.text.push_str(&format!("[{name}]\n"));
        for (k, v) in rows {
            self.text.push_str(&format!("{k} = {v}\n"));
        }
    }

    /// The file's text.
    pub fn finish(self) -> String {
        self.text
    }
}

/// A parameter's name as a TOML key: quoted (names hold dots).
pub fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

/// A content file read back.
pub struct Content {
    /// The game: as written when it is a file (absolute in what this version writes), else
    /// found from the file's folder and above (an older file's path held from the working folder
    /// it was made in), else as written.
    pub game: PathBuf,
    pub turn_order: Option<String>,
    /// Every parameter value: the `[team.<name>]` tables' in file order, then `[held]`'s.
    pub values: Vec<(String, f64)>,
    /// The whole file, for a driver's own keys and tables (`config`, `kind`, `[genes]`).
    pub table: toml::Table,
}

impl Content {
    /// Reads the content file at `path`; an error names the file and says what was expected.
    pub fn read(path: &Path) -> Result<Content> {
        let text = crate::input::read_text(path)?;
        Content::parse(path, &text)
    }

    /// The content of `text`, read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Content> {
        let v: toml::Table = crate::config::toml(&path.display().to_string(), text).map_err(|e| anyhow!(e))?;
        if v.contains_key("balance") {
            bail!(
                "{}: a balance config, not an encounter; expected a best_encounter.toml that `playforge balance {}` writes (outputs/<name>/<optimizer>-seed-<seed>/best_encounter.toml)",
                path.display(),
                path.display()
            );
        }
        let game = v
            .get("game")
            .and_then(|g| g.as_str())
            .ok_or_else(|| anyhow!("{}: no `game = \"…\"`; expected the game's path", path.display()))?;
        let game = crate::report::run_dir::find_named(Path::new(game), path).unwrap_or_else(|| PathBuf::from(game));
        let turn_order = v.get("turn_order").and_then(|g| g.as_str()).map(String::from);
        let mut values = Vec::new();
        let mut take = |t: &toml::Table, what: &str| -> Result<()> {
            for (k, val) in t {
                let x = val
                    .as_float()
                    .or_else(|| val.as_integer().map(|i| i as f64))
                    .ok_or_else(|| anyhow!("{}: [{what}] {k} = {val}; expected a number", path.display()))?;
                values.push((k.clone(), x));
            }
            Ok(())
        };
        if let Some(teams) = v.get("team").and_then(|t| t.as_table()) {
            for (name, t) in teams {
                take(t.as_table().ok_or_else(|| anyhow!("{}: [team.{name}] is not a table", path.display()))?, &format!("team.{name}"))?;
            }
        }
        if let Some(h) = v.get("held").and_then(|t| t.as_table()) {
            take(h, "held")?;
        }
        Ok(Content { game, turn_order, values, table: v })
    }

    /// A string key of the file (`config`, `kind`).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.table.get(key).and_then(|v| v.as_str())
    }

    /// A number key of the file (`fitness`, `quality`).
    pub fn number(&self, key: &str) -> Option<f64> {
        self.table.get(key).and_then(|v| v.as_float())
    }

    /// Whether `generate` wrote it (`kind = "generate"`).
    pub fn is_generated(&self) -> bool {
        self.str("kind") == Some("generate")
    }
}
